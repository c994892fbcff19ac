//! How a verdict is asked for in the OpenAI dialect's `response_format`, and the fallback
//! when a server refuses it.
//!
//! Servers differ: OpenAI, vLLM and llama-server take `json_schema`; llama-cpp-python answers
//! it with HTTP 500 `Input should be 'text' or 'json_object'` but takes
//! `{"type": "json_object", "schema": …}`; some take neither. So the fallback keys on what the
//! server *says* (an error body naming `response_format` or `json_schema`), whatever the
//! status, and steps down one level at a time. The level a server settled on is remembered
//! for the rest of the run (module `accepts`), so later invocations do not ask again.

/// How strictly a verdict is asked for, most to least.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `{"type": "json_schema", "json_schema": {"name": "verdict", "schema": …}}`.
    JsonSchema,
    /// `{"type": "json_object", "schema": …}` (llama-cpp-python).
    JsonObject,
    /// No `response_format`: the verdict is only parsed from the final message.
    Plain,
}

impl Format {
    /// The next, less strict level; `None` after `Plain`.
    pub fn next(self) -> Option<Format> {
        match self {
            Format::JsonSchema => Some(Format::JsonObject),
            Format::JsonObject => Some(Format::Plain),
            Format::Plain => None,
        }
    }

    /// How a server that takes this level takes a verdict, for `doctor`.
    pub fn taken(self) -> &'static str {
        match self {
            Format::JsonSchema => "the server takes `response_format: json_schema`",
            Format::JsonObject => {
                "the server refuses `json_schema` but takes `json_object` with the schema \
                 (verdicts are asked for that way)"
            }
            Format::Plain => {
                "the server takes no `response_format`: verdicts are parsed from the final \
                 message, not schema-enforced"
            }
        }
    }

    /// What the run's record says when a verdict was asked for at this level.
    pub fn note(self) -> &'static str {
        match self {
            Format::JsonSchema => "",
            Format::JsonObject => {
                "the server does not take `response_format: json_schema`: the verdict was \
                 asked for as `json_object` with the schema"
            }
            Format::Plain => {
                "the server does not take `response_format`: the verdict was not \
                 schema-enforced, only parsed from the final message"
            }
        }
    }
}

/// Whether an error answer (`status` not 2xx) refuses the request's `response_format`.
pub fn refused(status: u16, body: &str) -> bool {
    let lower = body.to_lowercase();
    status >= 400 && (lower.contains("response_format") || lower.contains("json_schema"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_naming_the_format_refuses_it_whatever_the_status() {
        let llama_cpp_python = r#"{"error":{"message":"[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]","type":"internal_server_error"}}"#;
        assert!(refused(500, llama_cpp_python));
        assert!(refused(400, "unknown field: response_format"));
        assert!(refused(422, "json_schema is not supported"));
        assert!(!refused(500, "Context size has been exceeded."));
        assert!(!refused(200, "response_format"));
    }

    #[test]
    fn levels_step_down() {
        assert_eq!(Format::JsonSchema.next(), Some(Format::JsonObject));
        assert_eq!(Format::JsonObject.next(), Some(Format::Plain));
        assert_eq!(Format::Plain.next(), None);
    }
}
