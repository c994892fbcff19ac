//! The answer without its reasoning: a verdict is read only from the part of the answer after
//! the model's thinking.
//!
//! Reasoning models and their chat templates put their drafts in the answer text: `<think>…
//! </think>` (DeepSeek-R1, Qwen3, QwQ), `<thinking>…</thinking>`, `<reasoning>…</reasoning>`,
//! or a leading block closed by `</think>` alone (templates that open the tag in the prompt).
//! A draft `approve` there is not a verdict. Recognised, with tags in any case:
//! - a block opened and closed by the same tag: removed;
//! - an opening tag never closed (an answer cut off inside its reasoning): everything from it
//!   on is removed;
//! - a closing tag with no opening before it: everything up to it is removed.
//!
//! The native adapters read only an answer's content, never a provider's reasoning fields
//! (`reasoning_content`, `thinking` blocks), so those never reach the reader.

const TAGS: [&str; 3] = ["think", "thinking", "reasoning"];

/// `message` with its reasoning blocks removed, and whether it had any.
pub fn final_part(message: &str) -> (String, bool) {
    // ASCII lower-casing keeps every byte offset.
    let lower = message.to_ascii_lowercase();
    let mut out = String::new();
    let mut at = 0;
    let mut found = false;
    while let Some((start, tag, closing)) = next_tag(&lower, at) {
        found = true;
        let open_len = tag.len() + if closing { 3 } else { 2 };
        if closing {
            // A closing tag with nothing open: the reasoning ran from the start to here.
            out.clear();
            at = start + open_len;
            continue;
        }
        out.push_str(&message[at..start]);
        let close = format!("</{tag}>");
        match lower[start + open_len..].find(&close) {
            Some(end) => at = start + open_len + end + close.len(),
            None => {
                at = message.len();
                break;
            }
        }
    }
    out.push_str(&message[at.min(message.len())..]);
    (out, found)
}

/// The first reasoning tag at or after `from`: its offset, name, and whether it closes.
fn next_tag(lower: &str, from: usize) -> Option<(usize, &'static str, bool)> {
    TAGS.iter()
        .flat_map(|tag| {
            let open = format!("<{tag}>");
            let close = format!("</{tag}>");
            [
                lower[from..].find(&open).map(|i| (from + i, *tag, false)),
                lower[from..].find(&close).map(|i| (from + i, *tag, true)),
            ]
        })
        .flatten()
        .min_by_key(|(at, _, _)| *at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_blocks_are_set_aside() {
        let table = [
            ("<think>draft approve</think>\nfinal", "\nfinal"),
            (
                "a <THINKING>x</Thinking> b <reasoning>y</reasoning> c",
                "a  b  c",
            ),
            ("draft approve</think>final", "final"),
            ("answer <think>cut off inside the reasoning", "answer "),
            ("no reasoning at all", "no reasoning at all"),
            ("<think>one</think>mid<think>two</think>end", "midend"),
            ("x</think>y</think>z", "z"),
            ("<think>a <thinking>b</thinking> c</think>d", "d"),
        ];
        for (message, expected) in table {
            assert_eq!(final_part(message).0, expected, "{message}");
        }
        assert!(!final_part("plain").1 && final_part("<think></think>").1);
    }
}
