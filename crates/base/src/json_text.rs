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

/// `text` with the control characters inside its string literals escaped (`\n`, `\t`,
/// `\u001b`, …), which JSON forbids raw but models write: a tool call's `content` with real
/// newlines in it. Everything outside strings is left as it is.
pub fn escape_controls_in_strings(text: &str) -> String {
    let mut strings = JsonStrings::default();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let inside = strings.in_string;
        strings.feed(c);
        match c {
            '\n' if inside => out.push_str("\\n"),
            '\r' if inside => out.push_str("\\r"),
            '\t' if inside => out.push_str("\\t"),
            c if inside && c.is_control() && (c as u32) < 0x20 => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// JSON parsed as it is, else with the control characters in its strings escaped (module
/// doc); the first parse's error when neither parses.
pub fn parse_lenient(text: &str) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::from_str(text).or_else(|strict| {
        serde_json::from_str(&escape_controls_in_strings(text)).map_err(|_| strict)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_control_characters_in_strings_are_escaped_and_nothing_else_is_touched() {
        let raw = "{\"path\": \"a.txt\",\n \"content\": \"line 1\nline\t2\u{1b}\\n\"}";
        assert!(serde_json::from_str::<serde_json::Value>(raw).is_err());
        let value = parse_lenient(raw).unwrap();
        assert_eq!(value["path"], "a.txt");
        // The raw newline and tab, the escape character and the JSON escape `\n` all read.
        assert_eq!(value["content"], "line 1\nline\t2\u{1b}\n");
        // Valid JSON is parsed as it is; what is not JSON for another reason stays an error.
        assert_eq!(parse_lenient("{\"a\": 1}").unwrap()["a"], 1);
        assert!(parse_lenient("{\"a\": ").is_err());
        assert!(
            parse_lenient("{\"a\"\n: \"x\"}").is_ok(),
            "newlines between tokens are JSON"
        );
    }

    #[test]
    fn quotes_escapes_and_structure_are_told_apart() {
        let text = r#"{"a\"}": [1, "x,y"], "b": "\\"}"#;
        let mut strings = JsonStrings::default();
        let outside: String = text.chars().filter(|&c| !strings.feed(c)).collect();
        assert_eq!(outside, r#"{: [1, ], : }"#);
    }
}
