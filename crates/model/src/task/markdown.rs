//! The little Markdown a task file needs: lines with their byte offsets (so every problem can be
//! located), ATX headings, and fenced code blocks (a `#` inside a fence is not a heading).
//!
//! A full CommonMark parser would lose the line positions diagnostics need and buys nothing for
//! the handful of constructs task files use.

/// One line of a file, without its line terminator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Line<'a> {
    /// Byte offset of the line's first character in the whole file.
    pub offset: usize,
    pub text: &'a str,
}

impl<'a> Line<'a> {
    pub fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }

    /// Leading spaces, a tab counting as four.
    pub fn indent(&self) -> usize {
        self.text
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .map(|c| if c == '\t' { 4 } else { 1 })
            .sum()
    }
}

/// The lines of `source` from byte offset `start` (a line start) to the end, `\r\n` tolerated.
pub(crate) fn lines_from(source: &str, start: usize) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut offset = start;
    for raw in source[start..].split_inclusive('\n') {
        let text = raw.strip_suffix('\n').unwrap_or(raw);
        let text = text.strip_suffix('\r').unwrap_or(text);
        out.push(Line { offset, text });
        offset += raw.len();
    }
    out
}

/// An ATX heading: its level and its text without the `#`s, or `None` for any other line.
pub(crate) fn heading(text: &str) -> Option<(usize, &str)> {
    let trimmed = text.trim_start_matches(' ');
    if text.len() - trimmed.len() > 3 {
        return None;
    }
    let level = trimmed.bytes().take_while(|b| *b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &trimmed[level..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    Some((level, rest.trim().trim_end_matches('#').trim_end()))
}

/// Tracks whether successive lines are inside a fenced code block.
#[derive(Debug, Default)]
pub(crate) struct Fences {
    open: Option<(char, usize)>,
}

impl Fences {
    /// Whether a fence is open (the last line fed opened it or is inside it).
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Feeds the next line; true when the line is part of a fence (its delimiters included), so
    /// it must not be read as a heading or a list item.
    pub fn is_code(&mut self, text: &str) -> bool {
        let trimmed = text.trim_start_matches(' ');
        let fence = |ch: char| trimmed.chars().take_while(|c| *c == ch).count();
        match self.open {
            Some((ch, len)) => {
                if fence(ch) >= len && trimmed.trim_start_matches(ch).trim().is_empty() {
                    self.open = None;
                }
                true
            }
            None => {
                for ch in ['`', '~'] {
                    let len = fence(ch);
                    if len >= 3 {
                        self.open = Some((ch, len));
                        return true;
                    }
                }
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_offsets_and_drop_terminators() {
        let src = "a\r\nbc\n\nd";
        let lines = lines_from(src, 0);
        let got: Vec<_> = lines.iter().map(|l| (l.offset, l.text)).collect();
        assert_eq!(got, vec![(0, "a"), (3, "bc"), (6, ""), (7, "d")]);
        assert_eq!(lines_from(src, 3)[0].text, "bc");
    }

    #[test]
    fn recognizes_atx_headings_only() {
        assert_eq!(heading("# Title"), Some((1, "Title")));
        assert_eq!(
            heading("## Acceptance Criteria ##"),
            Some((2, "Acceptance Criteria"))
        );
        assert_eq!(heading("##"), Some((2, "")));
        assert_eq!(heading("#hashtag"), None);
        assert_eq!(heading("    # code"), None);
        assert_eq!(heading("####### seven"), None);
    }

    #[test]
    fn fences_hide_their_content() {
        let mut fences = Fences::default();
        let flags: Vec<bool> = ["text", "```sh", "# not a heading", "```", "# heading"]
            .iter()
            .map(|l| fences.is_code(l))
            .collect();
        assert_eq!(flags, vec![false, true, true, true, false]);
    }
}
