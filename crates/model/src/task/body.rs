//! The Markdown body of a task file: its title heading, its `## Acceptance Criteria` section, and
//! the requirements (everything else).
//!
//! Requirements are the whole body minus the title line and the criteria section, so sections
//! such as "Context" or "Notes" reach the agents too (GuardKit's "first paragraph only" lost them).

use super::markdown::{heading, lines_from, Fences, Line};

/// The parts of a body.
#[derive(Debug, Default)]
pub(crate) struct Body<'a> {
    /// The text of the first level-1 heading.
    pub title: Option<String>,
    pub criteria: Option<CriteriaSection<'a>>,
    /// A second criteria heading: its section is appended to the first, as GuardKit reads it.
    pub duplicate_criteria: Option<Line<'a>>,
    /// The criteria section was found only by reading as GuardKit does: under a heading of
    /// another level (`### Acceptance Criteria (…)`), or under a heading inside a code fence
    /// that is never closed (the fence, then, ends at the heading). For a located warning.
    pub tolerated: Option<Tolerated<'a>>,
    /// An "Acceptance Criteria" heading at another level than 2, for a precise hint.
    pub misplaced_criteria: Option<Line<'a>>,
    /// A `## Acceptance Criteria` heading swallowed by a code fence that is never closed, and
    /// the fence's opening line: the likely reason no section was found.
    pub fenced_criteria: Option<(Line<'a>, Line<'a>)>,
    /// A `## Acceptance Criteria` heading inside a code fence that closes later (a quoted
    /// example, or fences paired differently than the author meant), and the fence's line.
    pub quoted_criteria: Option<(Line<'a>, Line<'a>)>,
    pub requirements: String,
    /// The body without the title line, criteria section included: the requirements when the
    /// criteria come from the front matter.
    pub whole: String,
}

/// How a criteria section GuardKit reads, and a strict reading would not, was found.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Tolerated<'a> {
    /// Under a heading of level 3 or more.
    Level(Line<'a>),
    /// Under a heading inside the code fence opened at `fence` (GuardKit does not see code
    /// fences): one never closed, or one `closed` later.
    Fenced {
        heading: Line<'a>,
        fence: Line<'a>,
        closed: bool,
    },
}

/// The `## Acceptance Criteria` heading and the lines up to the next heading of level 1 or 2
/// (of its own level or above, for a tolerated deeper heading).
#[derive(Debug)]
pub(crate) struct CriteriaSection<'a> {
    pub heading: Line<'a>,
    pub lines: Vec<Line<'a>>,
}

/// Whether a heading's text names the criteria section: "Acceptance Criteria", in any case,
/// alone or followed by a non-word suffix such as `:` or `(Machine-Verifiable)`.
pub(crate) fn is_criteria_heading(text: &str) -> bool {
    const NAME: &str = "acceptance criteria";
    let Some(head) = text.get(..NAME.len()) else {
        return false;
    };
    let rest = &text[NAME.len()..];
    head.eq_ignore_ascii_case(NAME)
        && rest
            .chars()
            .next()
            .is_none_or(|c| !c.is_alphanumeric() && c != '_')
}

/// Splits the body starting at byte `body_offset` of `source`. Without a `## Acceptance
/// Criteria` section, reads it as GuardKit's loader finds it: under a deeper heading, or under a
/// heading a code fence that is never closed swallowed ([`Body::tolerated`]).
pub(crate) fn read(source: &str, body_offset: usize) -> Body<'_> {
    let strict = read_with(source, body_offset, None);
    if strict.criteria.is_some() {
        return strict;
    }
    let tolerated = match (
        strict.fenced_criteria,
        strict.misplaced_criteria,
        strict.quoted_criteria,
    ) {
        (Some((heading, fence)), ..) => Tolerated::Fenced {
            heading,
            fence,
            closed: false,
        },
        (None, Some(heading), _) => Tolerated::Level(heading),
        (None, None, Some((heading, fence))) => Tolerated::Fenced {
            heading,
            fence,
            closed: true,
        },
        (None, None, None) => return strict,
    };
    let mut body = read_with(source, body_offset, Some(tolerated));
    // Only a section with something in it: an empty quoted heading is an example, not criteria.
    let found = body.criteria.as_ref().is_some_and(|c| {
        c.lines.iter().any(|l| {
            let text = l.text.trim();
            !text.is_empty() && !text.starts_with("```") && !text.starts_with("~~~")
        })
    });
    if !found {
        return strict;
    }
    body.tolerated = Some(tolerated);
    body
}

fn read_with<'a>(
    source: &'a str,
    body_offset: usize,
    tolerated: Option<Tolerated<'a>>,
) -> Body<'a> {
    let (section_at, close_fence_at) = match tolerated {
        Some(Tolerated::Level(heading)) => (Some(heading.offset), None),
        Some(Tolerated::Fenced { heading, .. }) => (Some(heading.offset), Some(heading.offset)),
        None => (None, None),
    };
    // The level of the heading that opened the criteria section: deeper headings inside it
    // group criteria; one of this level or above ends it.
    let mut section_level = 2;
    let mut body = Body::default();
    let mut requirements: Vec<&str> = Vec::new();
    let mut whole: Vec<&str> = Vec::new();
    let mut in_criteria = false;
    let mut fences = Fences::default();
    let mut fence_open: Option<Line<'_>> = None;
    for line in lines_from(source, body_offset) {
        if close_fence_at == Some(line.offset) {
            fences = Fences::default();
        }
        let was_open = fences.is_open();
        let parsed = if fences.is_code(line.text) {
            if !was_open {
                fence_open = Some(line);
            }
            if let (Some((2, text)), Some(open)) = (heading(line.text), fence_open) {
                if is_criteria_heading(text) && body.fenced_criteria.is_none() {
                    body.fenced_criteria = Some((line, open));
                }
            }
            None
        } else {
            heading(line.text)
        };
        if let Some((level, text)) = parsed {
            let is_criteria = is_criteria_heading(text);
            if level <= section_level {
                in_criteria = false;
            }
            if level == 1 && body.title.is_none() {
                body.title = Some(text.to_string()).filter(|t| !t.is_empty());
                continue;
            }
            let opens = match section_at {
                Some(at) => at == line.offset,
                None => is_criteria && level == 2,
            };
            if opens && body.criteria.is_none() {
                body.criteria = Some(CriteriaSection {
                    heading: line,
                    lines: Vec::new(),
                });
                section_level = level;
                in_criteria = true;
                whole.push(line.text);
                continue;
            }
            if is_criteria && level == section_level && body.criteria.is_some() {
                // A second section: its criteria follow the first one's.
                body.duplicate_criteria.get_or_insert(line);
                in_criteria = true;
                whole.push(line.text);
                continue;
            } else if is_criteria && level != 2 {
                body.misplaced_criteria.get_or_insert(line);
            }
        }
        whole.push(line.text);
        match (&mut body.criteria, in_criteria) {
            (Some(section), true) => section.lines.push(line),
            _ => requirements.push(line.text),
        }
    }
    // A fence that closed later was a quoted example, not the cause of a missing section.
    if !fences.is_open() {
        body.quoted_criteria = body.fenced_criteria.take();
    }
    body.requirements = collapse_blank_runs(&requirements);
    body.whole = collapse_blank_runs(&whole);
    body
}

/// Joins lines, turning runs of blank lines into one and trimming the ends.
pub(crate) fn collapse_blank_runs(lines: &[&str]) -> String {
    let mut out = String::new();
    let mut previous_blank = true;
    for line in lines {
        let blank = line.trim().is_empty();
        if blank && previous_blank {
            continue;
        }
        out.push_str(line.trim_end());
        out.push('\n');
        previous_blank = blank;
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separates_title_criteria_and_requirements() {
        let src = "# Title\n\nIntro.\n\n## Acceptance Criteria\n- [ ] one\n\n### Group\n- two\n\n## Notes\nKeep it small.\n";
        let body = read(src, 0);
        assert_eq!(body.title.as_deref(), Some("Title"));
        let section = body.criteria.unwrap();
        assert_eq!(section.heading.text, "## Acceptance Criteria");
        let texts: Vec<_> = section.lines.iter().map(|l| l.text).collect();
        assert_eq!(texts, vec!["- [ ] one", "", "### Group", "- two", ""]);
        assert_eq!(body.requirements, "Intro.\n\n## Notes\nKeep it small.");
    }

    #[test]
    fn headings_inside_fences_do_not_count() {
        let src = "Text\n```md\n# Not the title\n## Acceptance Criteria\n```\n";
        let body = read(src, 0);
        assert_eq!(body.title, None);
        assert!(body.criteria.is_none());
        assert!(body.requirements.contains("# Not the title"));
    }

    #[test]
    fn a_heading_in_a_fence_never_closed_is_noted_with_the_fence_and_read_as_guardkit_does() {
        let source = "Intro\n```md\nexample\n## Acceptance Criteria\n- a\n";
        let strict = read_with(source, 0, None);
        assert!(strict.criteria.is_none());
        let (heading, fence) = strict.fenced_criteria.unwrap();
        assert_eq!((heading.offset, fence.offset), (20, 6));
        let body = read(source, 0);
        assert_eq!(body.criteria.unwrap().lines.len(), 1);
        assert!(matches!(
            body.tolerated,
            Some(Tolerated::Fenced { heading, fence, closed: false })
                if (heading.offset, fence.offset) == (20, 6)
        ));
        let body = read_with("```\n## Acceptance Criteria\n```\n", 0, None);
        assert!(body.fenced_criteria.is_none());
        assert!(body.quoted_criteria.is_some());
    }

    #[test]
    fn notes_misplaced_and_duplicate_criteria_headings() {
        assert!(is_criteria_heading(
            "Acceptance Criteria (Machine-Verifiable)"
        ));
        assert!(is_criteria_heading("ACCEPTANCE CRITERIA:"));
        assert!(!is_criteria_heading("Acceptance Criterias"));
        // Read as GuardKit reads them: a deeper heading is the section when there is no
        // level-2 one (up to the next heading of its level), a second section is appended.
        let body = read(
            "### Acceptance criteria:\n- a\n#### Group\n- b\n### Notes\nno\n",
            0,
        );
        assert_eq!(body.criteria.unwrap().lines.len(), 3);
        assert!(matches!(body.tolerated, Some(Tolerated::Level(line)) if line.offset == 0));
        assert_eq!(body.requirements, "### Notes\nno");

        let body = read(
            "## Acceptance Criteria\n- a\n## Acceptance Criteria\n- b\n",
            0,
        );
        assert_eq!(body.criteria.unwrap().lines.len(), 2);
        assert!(body.duplicate_criteria.is_some());
        assert!(body.tolerated.is_none());
    }
}
