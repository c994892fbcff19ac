//! Scanning JSON text by hand, for the few places that must look at it before (or instead of)
//! parsing it: which characters belong to a string literal, so that braces, commas, comments
//! and whitespace inside strings are left alone.

/// Whether the characters fed so far leave the scanner inside a JSON string literal.
#[derive(Debug, Default, Clone, Copy)]
pub struct JsonStrings {
    in_string: bool,
    escaped: bool,
}

impl JsonStrings {
    /// Feeds the next character; returns whether it is part of a string literal (its opening
    /// and closing quotes included).
    pub fn feed(&mut self, c: char) -> bool {
        if self.in_string {
            match c {
                _ if self.escaped => self.escaped = false,
                '\\' => self.escaped = true,
                '"' => self.in_string = false,
                _ => {}
            }
            return true;
        }
        if c == '"' {
            self.in_string = true;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_escapes_and_structure_are_told_apart() {
        let text = r#"{"a\"}": [1, "x,y"], "b": "\\"}"#;
        let mut strings = JsonStrings::default();
        let outside: String = text.chars().filter(|&c| !strings.feed(c)).collect();
        assert_eq!(outside, r#"{: [1, ], : }"#);
    }
}
