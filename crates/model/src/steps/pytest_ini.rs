//! pytest's configuration, as the runner's own copies need it.
//!
//! pytest takes its configuration from the first of `pytest.ini` (even an empty one),
//! `pyproject.toml` (with a `[tool.pytest.ini_options]` or, since pytest 9, a `[tool.pytest]`
//! table), `tox.ini` (`[pytest]`) and `setup.cfg` (`[tool:pytest]`). The runner's copies — the
//! hidden checks' and the base oracle's — keep the player's build files (a new dependency is the
//! player's to add), so a pytest section the player added or changed there would decide the
//! run: an `addopts = "-p plugin"` that loads a module flipping failures into passes, a `-k` that
//! deselects the task's test. Where the base has no `pytest.ini`, such a copy gets one holding
//! the base's pytest configuration ([`pytest_ini`]), which pytest reads before anything else.

/// The files pytest may read its configuration from, as text, where they exist.
#[derive(Debug, Clone, Copy, Default)]
pub struct PytestFiles<'a> {
    pub pyproject: Option<&'a str>,
    pub tox_ini: Option<&'a str>,
    pub setup_cfg: Option<&'a str>,
}

impl PytestFiles<'_> {
    /// Whether any of them holds a pytest section.
    pub fn configure_pytest(&self) -> bool {
        self.pyproject.and_then(pyproject_section).is_some()
            || self
                .tox_ini
                .and_then(|t| ini_section(t, "pytest"))
                .is_some()
            || self
                .setup_cfg
                .and_then(|t| ini_section(t, "tool:pytest"))
                .is_some()
    }
}

/// A `pytest.ini` that configures pytest as `base` does (an empty `[pytest]` section where it
/// has no pytest configuration), in pytest's own order of precedence.
pub fn pytest_ini(base: &PytestFiles) -> String {
    let body = base
        .pyproject
        .and_then(pyproject_section)
        .or_else(|| base.tox_ini.and_then(|t| ini_section(t, "pytest")))
        .or_else(|| base.setup_cfg.and_then(|t| ini_section(t, "tool:pytest")))
        .unwrap_or_default();
    format!(
        "# Written by autobuild in its own copy: the base's pytest configuration.\n[pytest]\n{body}"
    )
}

/// The lines of the ini section `[name]`, up to the next section.
fn ini_section(text: &str, name: &str) -> Option<String> {
    let mut lines = text.lines();
    lines.find(|line| line.trim() == format!("[{name}]"))?;
    let body: Vec<&str> = lines
        .take_while(|line| !line.trim_start().starts_with('['))
        .collect();
    Some(body.iter().map(|line| format!("{line}\n")).collect())
}

/// `pyproject.toml`'s pytest table as ini lines.
fn pyproject_section(text: &str) -> Option<String> {
    let doc: toml::Table = text.parse().ok()?;
    let pytest = doc.get("tool")?.as_table()?.get("pytest")?.as_table()?;
    let options = match pytest.get("ini_options").and_then(toml::Value::as_table) {
        Some(ini) => ini,
        None => pytest,
    };
    let mut out = String::new();
    for (key, value) in options {
        let text = match value {
            toml::Value::String(s) => s.clone(),
            toml::Value::Array(items) => items
                .iter()
                .map(|item| format!("\n    {}", scalar(item)))
                .collect(),
            toml::Value::Table(_) => continue,
            other => scalar(other),
        };
        out.push_str(&format!("{key} = {text}\n"));
    }
    Some(out)
}

fn scalar(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_configuration_is_written_in_pytests_order() {
        let pyproject = "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\n\
                         testpaths = [\"tests\"]\naddopts = \"-q\"\nxfail_strict = true\n";
        let files = PytestFiles {
            pyproject: Some(pyproject),
            tox_ini: Some("[pytest]\naddopts = -x\n"),
            setup_cfg: None,
        };
        assert!(files.configure_pytest());
        let ini = pytest_ini(&files);
        assert!(ini.contains("[pytest]\n"), "{ini}");
        assert!(ini.contains("testpaths = \n    tests\n"), "{ini}");
        assert!(
            ini.contains("addopts = -q\n") && !ini.contains("-x"),
            "{ini}"
        );
        assert!(ini.contains("xfail_strict = true\n"), "{ini}");
    }

    #[test]
    fn ini_sections_are_taken_verbatim_and_nothing_is_an_empty_section() {
        let tox = PytestFiles {
            tox_ini: Some("[tox]\nenvlist = py3\n[pytest]\naddopts = -ra\n[testenv]\nx = 1\n"),
            ..PytestFiles::default()
        };
        assert!(pytest_ini(&tox).ends_with("[pytest]\naddopts = -ra\n"));
        let cfg = PytestFiles {
            setup_cfg: Some("[metadata]\nname = x\n\n[tool:pytest]\nminversion = 6\n"),
            ..PytestFiles::default()
        };
        assert!(pytest_ini(&cfg).ends_with("[pytest]\nminversion = 6\n"));
        let none = PytestFiles {
            pyproject: Some("[project]\nname = \"x\"\n"),
            ..PytestFiles::default()
        };
        assert!(!none.configure_pytest());
        assert!(pytest_ini(&none).ends_with("[pytest]\n"));
        // pytest 9's native table, and a file that is not TOML.
        let native = PytestFiles {
            pyproject: Some("[tool.pytest]\nminversion = \"9.0\"\n"),
            ..PytestFiles::default()
        };
        assert!(pytest_ini(&native).contains("minversion = 9.0\n"));
        let broken = PytestFiles {
            pyproject: Some("[tool.pytest.ini_options\n"),
            ..PytestFiles::default()
        };
        assert!(!broken.configure_pytest());
    }
}
