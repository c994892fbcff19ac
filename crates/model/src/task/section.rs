//! The `## Acceptance Criteria` section as a sequence of blocks: top-level list items (with the
//! lines that belong to them), sub-headings, and everything else (prose, fenced code, tables).
//!
//! Nothing in the section is dropped: items become criteria, and every other block reaches the
//! prompt in its place (see [`super::criteria`]). GuardKit projects group criteria under `###`
//! headings, explain them in prose, and show expected output in code blocks; an agent that never
//! sees those works against a different contract than the one the user wrote.
//!
//! Items are lines starting with `- `, `* ` (either with `[ ]`/`[x]`), or a number followed by
//! `.` or `)` (`1. `, `2) `, also with a checkbox), at the indentation of the section's first
//! item or less. Deeper-indented lines, sub-bullets and lazy continuation lines belong to the
//! item above them; after a blank line only deeper-indented lines do, so a closing paragraph is
//! a block of its own, not part of the last criterion. A fenced code block belongs to whatever
//! its opening line belongs to.

use super::markdown::{heading, Fences, Line};

/// A top-level list item with the lines that belong to it.
#[derive(Debug)]
pub(crate) struct Item<'a> {
    pub line: Line<'a>,
    /// The first line's text after its marker and checkbox.
    pub first: &'a str,
    pub checked: bool,
    pub continuation: Vec<&'a str>,
}

/// One block of the section, in file order.
#[derive(Debug)]
pub(crate) enum Block<'a> {
    Item(Item<'a>),
    Heading {
        line: Line<'a>,
        level: usize,
        text: &'a str,
    },
    /// Lines that are neither items nor headings, blank lines between them kept.
    Other(Vec<&'a str>),
}

/// Splits the section's lines into blocks.
pub(crate) fn blocks<'a>(section: &[Line<'a>]) -> Vec<Block<'a>> {
    let mut blocks: Vec<Block<'a>> = Vec::new();
    let mut open = false;
    let mut after_blank = false;
    let mut base_indent: Option<usize> = None;
    let mut fences = Fences::default();
    // Whether the fence being read belongs to the open item (else it is an `Other` block).
    let mut fence_in_item = false;
    for line in section {
        let indent = line.indent();
        let deeper = base_indent.is_some_and(|base| indent > base);
        let was_in_fence = fences.is_open();
        if fences.is_code(line.text) {
            if !was_in_fence {
                fence_in_item = open && (deeper || !after_blank);
                if !fence_in_item {
                    open = false;
                }
                after_blank = false;
            }
            if fence_in_item {
                push_continuation(&mut blocks, line.text);
            } else {
                push_other(&mut blocks, line.text);
            }
            continue;
        }
        if line.is_blank() {
            after_blank = true;
            if !open {
                push_other(&mut blocks, line.text);
            }
            continue;
        }
        if let Some((level, text)) = heading(line.text) {
            open = false;
            blocks.push(Block::Heading {
                line: *line,
                level,
                text,
            });
        } else if let Some((first, checked)) = list_item(line.text).filter(|_| !deeper) {
            base_indent = base_indent.or(Some(indent));
            blocks.push(Block::Item(Item {
                line: *line,
                first,
                checked,
                continuation: Vec::new(),
            }));
            open = true;
        } else if open && (deeper || !after_blank) {
            push_continuation(&mut blocks, line.text);
        } else {
            open = false;
            push_other(&mut blocks, line.text);
        }
        after_blank = false;
    }
    blocks
}

fn push_continuation<'a>(blocks: &mut [Block<'a>], text: &'a str) {
    if let Some(Block::Item(item)) = blocks.last_mut() {
        item.continuation.push(text);
    }
}

fn push_other<'a>(blocks: &mut Vec<Block<'a>>, text: &'a str) {
    match blocks.last_mut() {
        Some(Block::Other(lines)) => lines.push(text),
        _ => blocks.push(Block::Other(vec![text])),
    }
}

/// The text of a list item line after its marker and checkbox, and whether it is checked.
pub(crate) fn list_item(text: &str) -> Option<(&str, bool)> {
    let trimmed = text.trim_start_matches([' ', '\t']);
    let rest = ["- ", "-\t", "* ", "*\t"]
        .iter()
        .find_map(|marker| trimmed.strip_prefix(marker))
        .or_else(|| (trimmed == "-" || trimmed == "*").then_some(""))
        .or_else(|| after_number(trimmed))?;
    let rest = rest.trim_start_matches([' ', '\t']);
    for (checkbox, checked) in [("[ ]", false), ("[x]", true), ("[X]", true)] {
        if let Some(after) = rest.strip_prefix(checkbox) {
            if after.is_empty() || after.starts_with([' ', '\t']) {
                return Some((after.trim(), checked));
            }
        }
    }
    Some((rest.trim_end(), false))
}

/// The text after an ordered-list marker (`1.`, `12)`): up to nine digits, then `.` or `)`,
/// then whitespace or the end of the line (CommonMark's rule, so `3.5 seconds` is prose).
fn after_number(text: &str) -> Option<&str> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if !(1..=9).contains(&digits) {
        return None;
    }
    let rest = text[digits..].strip_prefix(['.', ')'])?;
    (rest.is_empty() || rest.starts_with([' ', '\t'])).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::markdown::lines_from;

    fn kinds(src: &str) -> Vec<String> {
        blocks(&lines_from(src, 0))
            .iter()
            .map(|b| match b {
                Block::Item(item) => format!("item {}", item.first),
                Block::Heading { text, .. } => format!("heading {text}"),
                Block::Other(lines) => format!("other {}", lines.join("|")),
            })
            .collect()
    }

    #[test]
    fn numbered_items_are_items_and_decimals_are_not() {
        assert_eq!(list_item("1. one"), Some(("one", false)));
        assert_eq!(list_item("12) [x] done"), Some(("done", true)));
        assert_eq!(list_item("3.5 seconds"), None);
        assert_eq!(list_item("1234567890. too long"), None);
    }

    #[test]
    fn prose_code_and_headings_are_blocks_of_their_own() {
        let got = kinds("### Group\n- a\n\nClosing prose.\n\n```\ncode\n```\n| t | u |\n");
        assert_eq!(
            got,
            vec![
                "heading Group",
                "item a",
                "other Closing prose.||```|code|```|| t | u |",
            ]
        );
    }

    #[test]
    fn a_fence_right_under_an_item_belongs_to_it() {
        let got = blocks(&lines_from(
            "- run\n```sh\nmake\n\nmake check\n```\n- next\n",
            0,
        ));
        let Block::Item(first) = &got[0] else {
            panic!("{got:?}")
        };
        assert_eq!(
            first.continuation,
            vec!["```sh", "make", "", "make check", "```"]
        );
        assert!(matches!(&got[1], Block::Item(i) if i.first == "next"));
    }
}
