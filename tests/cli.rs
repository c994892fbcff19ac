//! Command-line cases: every user-visible command, README examples included, is checked
//! against its recorded output so documentation cannot drift from behaviour.

#[test]
fn cli_cases() {
    trycmd::TestCases::new()
        .case("tests/cmd/*.toml")
        .case("README.md");
}
