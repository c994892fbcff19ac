//! Why a native endpoint's successful answer is not a reply autobuild can read: not JSON, or
//! JSON without the parts of a chat completion (OpenAI) or a message (Anthropic).

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    /// The body is not JSON, in the JSON parser's words.
    #[error("{0}")]
    NotJson(String),
    /// A top-level part of the answer is missing: `choices` (OpenAI) or `content`
    /// (Anthropic).
    #[error("the answer has no `{0}`")]
    Missing(&'static str),
    /// An OpenAI choice without its `message`.
    #[error("the answer's choice has no `message`")]
    NoMessage,
}
