//! What a server was found to take, remembered for the rest of the run (this process) so later
//! invocations do not ask again: how a verdict may be asked for (module `format`), whether
//! answers may be streamed (module `stream`) and whether it takes `prompt_cache_key`. Keyed by
//! `base_url` and model.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use super::format::Format;

/// What one server takes; until it refuses something, the most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepts {
    pub format: Format,
    pub stream: bool,
    /// `prompt_cache_key` (OpenAI's prompt-cache routing).
    pub cache_key: bool,
}

impl Default for Accepts {
    fn default() -> Accepts {
        Accepts {
            format: Format::JsonSchema,
            stream: true,
            cache_key: true,
        }
    }
}

static SETTLED: Mutex<Option<HashMap<String, Accepts>>> = Mutex::new(None);

fn key(base_url: &str, model: &str) -> String {
    format!("{base_url} {model}")
}

/// What `model` at `base_url` was found to take earlier in the run, or the most.
pub fn of(base_url: &str, model: &str) -> Accepts {
    let map = SETTLED.lock().unwrap_or_else(PoisonError::into_inner);
    map.as_ref()
        .and_then(|map| map.get(&key(base_url, model)).copied())
        .unwrap_or_default()
}

/// Remembers what `model` at `base_url` takes.
pub fn remember(base_url: &str, model: &str, accepts: Accepts) {
    let mut map = SETTLED.lock().unwrap_or_else(PoisonError::into_inner);
    map.get_or_insert_with(HashMap::new)
        .insert(key(base_url, model), accepts);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_server_takes_is_remembered_per_server_and_model() {
        let url = "http://accepts-test/v1";
        assert_eq!(of(url, "m"), Accepts::default());
        let less = Accepts {
            format: Format::JsonObject,
            stream: false,
            cache_key: false,
        };
        remember(url, "m", less);
        assert_eq!(of(url, "m"), less);
        assert_eq!(of(url, "other"), Accepts::default());
    }
}
