//! The forms a secret's value takes when it is encoded to get past a literal match: what the
//! landing's secret check looks for besides the value itself (`git::Repo::paths_gaining`).
//!
//! Each secret also as: reversed; hex (lower and upper case); URL-encoded; and base64 in the
//! standard and the URL-safe alphabet, with or without padding, **wherever it sits** in a
//! longer encoded text. Base64 turns three bytes into four characters, so a secret that starts
//! one or two bytes into a group encodes differently; for each of the three alignments the form
//! kept is the run of characters that only the secret's bytes decide (the first and last
//! characters, which share bits with the neighbouring bytes, are left out), which any base64
//! text holding the secret contains.
//!
//! Not caught, and docs/sandbox.md ("What an agent can and cannot do") says so: a value split into pieces, encrypted,
//! compressed or otherwise transformed, or computed when the code runs.

use data_encoding::{Encoding, BASE64, BASE64URL, HEXLOWER, HEXUPPER};

/// Shorter encoded forms are not looked for: they would match ordinary text.
const MIN_FORM: usize = 8;

/// The encoded forms of `secret` (not the value itself), without duplicates.
pub fn encoded_forms(secret: &str) -> Vec<String> {
    let bytes = secret.as_bytes();
    let mut forms = vec![
        secret.chars().rev().collect::<String>(),
        HEXLOWER.encode(bytes),
        HEXUPPER.encode(bytes),
        percent_encoding::utf8_percent_encode(secret, percent_encoding::NON_ALPHANUMERIC)
            .to_string(),
    ];
    for alphabet in [&BASE64, &BASE64URL] {
        forms.extend((0..3).filter_map(|offset| base64_inner(alphabet, bytes, offset)));
    }
    forms.retain(|form| form != secret && form.len() >= MIN_FORM);
    forms.sort();
    forms.dedup();
    forms
}

/// The characters of `bytes` encoded `offset` bytes into a three-byte group that only its
/// bytes decide.
fn base64_inner(alphabet: &Encoding, bytes: &[u8], offset: usize) -> Option<String> {
    let mut shifted = vec![0u8; offset];
    shifted.extend_from_slice(bytes);
    let encoded = alphabet.encode(&shifted);
    let start = [0, 2, 3][offset];
    let total = shifted.len();
    let end = total / 3 * 4 + total % 3;
    encoded.get(start..end).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "sk-test-0123456789abcdef";

    fn caught(text: &str) -> bool {
        encoded_forms(SECRET)
            .iter()
            .any(|form| text.contains(form.as_str()))
    }

    #[test]
    fn every_common_encoding_of_the_secret_is_caught_wherever_it_sits() {
        let line = |prefix: &str| format!("{prefix}{SECRET}\n");
        let encodings = [
            BASE64.encode(SECRET.as_bytes()),
            BASE64
                .encode(SECRET.as_bytes())
                .trim_end_matches('=')
                .to_string(),
            BASE64.encode(line("API_KEY=").as_bytes()),
            BASE64.encode(line("K=").as_bytes()),
            BASE64.encode(line("KE=").as_bytes()),
            BASE64URL.encode(line("token: ").as_bytes()),
            HEXLOWER.encode(line("x").as_bytes()),
            HEXUPPER.encode(SECRET.as_bytes()),
            SECRET.chars().rev().collect(),
            "https://e.x/?k=sk%2Dtest%2D0123456789abcdef".to_string(),
        ];
        for encoded in encodings {
            assert!(caught(&encoded), "{encoded} was not caught");
        }
    }

    #[test]
    fn ordinary_text_and_other_values_are_not_taken_for_it() {
        for text in [
            "",
            "hello world",
            &BASE64.encode(b"sk-test-9999999999999999"),
            &HEXLOWER.encode(b"an unrelated value of some length"),
        ] {
            assert!(!caught(text), "{text} was taken for the secret");
        }
        assert!(!encoded_forms(SECRET).contains(&SECRET.to_string()));
    }
}
