//! The runner's own regular expressions, each a `static` compiled on first use:
//! `base::regexes! { /// what it finds
//! NAME = r"…"; }`. A built-in pattern that does not compile is a bug its own tests find
//! (it panics naming the pattern), never input a user or an agent controls.

#[doc(hidden)]
pub use regex::Regex as __Regex;

#[macro_export]
macro_rules! regexes {
    ($($(#[$meta:meta])* $vis:vis $name:ident = $pattern:expr;)+) => {$(
        $(#[$meta])*
        $vis static $name: std::sync::LazyLock<$crate::regexes::__Regex> =
            std::sync::LazyLock::new(|| {
                $crate::regexes::__Regex::new($pattern)
                    .expect(concat!(stringify!($name), " is a valid pattern"))
            });
    )+};
}
