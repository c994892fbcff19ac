//! Cutting text to a size without splitting a character: by bytes (a limit on what is kept or
//! sent) or by characters (an excerpt shown to a person).

/// The largest char boundary of `text` at or below `index` (which may be past its end).
pub fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// The smallest char boundary of `text` at or above `index` (which may be past its end).
pub fn ceil_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

/// Cuts `text` to at most `limit` bytes at a char boundary; whether anything was cut.
pub fn truncate(text: &mut String, limit: usize) -> bool {
    if text.len() <= limit {
        return false;
    }
    text.truncate(floor_char_boundary(text, limit));
    true
}

/// The first `max` characters of `text`, when it has more.
pub fn cut_chars(text: &str, max: usize) -> Option<&str> {
    text.char_indices().nth(max).map(|(end, _)| &text[..end])
}

/// `text` when it has at most `max` characters, else its first `max` and `…`.
pub fn elide(text: &str, max: usize) -> String {
    match cut_chars(text, max) {
        Some(head) => format!("{head}…"),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_never_split_a_character() {
        let text = "aé€";
        assert_eq!(floor_char_boundary(text, 2), 1);
        assert_eq!(ceil_char_boundary(text, 2), 3);
        assert_eq!(floor_char_boundary(text, 4), 3);
        assert_eq!(ceil_char_boundary(text, 4), 6);
        assert_eq!(floor_char_boundary(text, 99), 6);
        assert_eq!(ceil_char_boundary(text, 99), 6);
        assert_eq!(floor_char_boundary("", 3), 0);
    }

    #[test]
    fn truncate_cuts_bytes_and_says_whether_it_did() {
        let mut text = "aé€".to_string();
        assert!(!truncate(&mut text, 6));
        assert!(truncate(&mut text, 5));
        assert_eq!(text, "aé");
        assert!(truncate(&mut text, 2));
        assert_eq!(text, "a");
    }

    #[test]
    fn excerpts_count_characters() {
        assert_eq!(cut_chars("aé€", 3), None);
        assert_eq!(cut_chars("aé€", 2), Some("aé"));
        assert_eq!(elide("aé€", 2), "aé…");
        assert_eq!(elide("aé€", 3), "aé€");
    }
}
