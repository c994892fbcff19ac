//! A player's dispute of a reviewer's objection: the `## Disputed` section of its final
//! message (prompts/player.md defines the format), shown to the next reviewer as such.
//!
//! The section is the text under a heading whose title is `Disputed` (any level, any case, an
//! optional colon), up to the next heading of the same or a higher level. The player's claim is
//! never trusted by the runner: the reviewer weighs it against the code.

/// The section's body, trimmed; empty when the message has none or it is empty.
pub fn disputed_section(message: &str) -> String {
    let mut level = None;
    let mut body: Vec<&str> = Vec::new();
    let mut in_fence = false;
    let mut after_blank = false;
    for line in message.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        let heading = (!in_fence).then(|| heading(line)).flatten();
        match (level, heading) {
            (None, Some((found, title))) if is_disputed(title) => level = Some(found),
            (Some(open), Some((found, _))) if found <= open => break,
            // After a blank line, only more items (or their indented continuation) belong to
            // the section: the player's closing lines do not.
            (Some(_), None) if after_blank && !continues_list(line) && !line.trim().is_empty() => {
                if body.iter().any(|l| !l.trim().is_empty()) {
                    break;
                }
                body.push(line);
            }
            (Some(_), _) => body.push(line),
            (None, _) => {}
        }
        after_blank = level.is_some() && line.trim().is_empty();
    }
    body.join("\n").trim().to_string()
}

/// `(level, title)` of a Markdown ATX heading.
fn heading(line: &str) -> Option<(usize, &str)> {
    let trimmed = line.trim_start();
    let level = trimmed.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &trimmed[level..];
    rest.starts_with(' ').then(|| (level, rest.trim()))
}

fn continues_list(line: &str) -> bool {
    let trimmed = line.trim_start();
    line.starts_with([' ', '\t'])
        || trimmed.starts_with("- ")
        || trimmed.starts_with("* ")
        || trimmed
            .split_once(". ")
            .is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()))
}

fn is_disputed(title: &str) -> bool {
    title
        .trim_end_matches(':')
        .trim()
        .eq_ignore_ascii_case("disputed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_is_found_by_its_heading_and_ends_at_the_next() {
        let table = [
            ("Done.", ""),
            (
                "Done.\n\n## Disputed\n- must_fix 1: not required by AC-001\n\n## Criteria\nAC-001 met",
                "- must_fix 1: not required by AC-001",
            ),
            (
                "# Summary\n### disputed:\n- a\n- b\n#### detail\nmore\n## Next",
                "- a\n- b\n#### detail\nmore",
            ),
            ("## Disputed\n", ""),
            ("```\n## Disputed\n- quoted\n```\n", ""),
            ("##Disputed\n- not a heading", ""),
            (
                "## Disputed\n- a: no\n\n- b: no\n  because\n\nAC-001: done",
                "- a: no\n\n- b: no\n  because",
            ),
            ("## Disputed\n\nThe logging ask: out of scope.\n\nAC-001: done", "The logging ask: out of scope."),
        ];
        for (message, expected) in table {
            assert_eq!(disputed_section(message), expected, "{message:?}");
        }
    }
}
