//! Workflow expressions: `if` and `until` are bare minijinja expressions, string fields may
//! interpolate `${{ expr }}` (docs/workflows.md).
//!
//! Expressions compile once ([`Expr::compile`]) and evaluate with strict undefined behaviour:
//! reading a name or attribute that does not exist is an error, never a silent `false`. A
//! condition must evaluate to a real boolean; `"false"` (a string) or `0` are errors rather than
//! surprises.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::OnceLock;

use minijinja::{Environment, Expression, UndefinedBehavior};
use serde::Serialize;

/// Why an expression could not be compiled or evaluated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExprError {
    #[error("invalid expression `{expr}`: {message}")]
    Syntax {
        expr: String,
        message: String,
        /// Byte offset of the problem inside the expression text, when known.
        offset: Option<usize>,
    },
    #[error("cannot evaluate `{expr}`: {message}")]
    Eval { expr: String, message: String },
    #[error("`{expr}` evaluated to {found}, expected true or false")]
    NotBoolean { expr: String, found: String },
    #[error("unterminated `${{{{` in `{text}`: close it with `}}}}`")]
    Unterminated { text: String, offset: usize },
}

/// A compiled expression.
pub struct Expr {
    text: String,
    compiled: Expression<'static, 'static>,
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Expr({:?})", self.text)
    }
}

fn environment() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env
    })
}

impl Expr {
    pub fn compile(text: &str) -> Result<Expr, ExprError> {
        if let Some((offset, found, word)) = c_style_operator(text) {
            return Err(ExprError::Syntax {
                expr: text.to_string(),
                message: format!(
                    "`{found}` is not an operator in expressions (minijinja); write `{word}`"
                ),
                offset: Some(offset),
            });
        }
        let compiled = environment()
            .compile_expression_owned(text.to_string())
            .map_err(|e| ExprError::Syntax {
                expr: text.to_string(),
                message: describe(&e),
                offset: e.range().map(|r| r.start),
            })?;
        Ok(Expr {
            text: text.to_string(),
            compiled,
        })
    }

    /// The variables the expression reads, as dotted paths (`steps.gate.outputs.approved`);
    /// a subscript or a call ends a path (`steps[x]` reads `steps`).
    pub fn variables(&self) -> BTreeSet<String> {
        self.compiled
            .undeclared_variables(true)
            .into_iter()
            .collect()
    }

    pub fn eval<S: Serialize>(&self, context: S) -> Result<minijinja::Value, ExprError> {
        self.compiled.eval(context).map_err(|e| ExprError::Eval {
            expr: self.text.clone(),
            message: describe(&e),
        })
    }

    /// Evaluates a condition (`if`, `until`); anything but a boolean is an error.
    pub fn eval_bool<S: Serialize>(&self, context: S) -> Result<bool, ExprError> {
        let value = self.eval(context)?;
        match bool::try_from(value.clone()) {
            Ok(b) if value.kind() == minijinja::value::ValueKind::Bool => Ok(b),
            _ => Err(ExprError::NotBoolean {
                expr: self.text.clone(),
                found: format!("{} `{value}`", value.kind()),
            }),
        }
    }
}

/// The first `&&`, `||` or `!` (not `!=`) outside a string literal, with the word to write
/// instead. minijinja rejects some of them and silently misreads others
/// (`x == 'a' && y` compiles), so they are refused before it sees them.
fn c_style_operator(text: &str) -> Option<(usize, &'static str, &'static str)> {
    // Byte-wise: the operators are ASCII, and a multi-byte character never contains them.
    let bytes = text.as_bytes();
    let mut quote = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(_) if b == b'\\' => i += 1,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'\'' || b == b'"' => quote = Some(b),
            None if bytes[i..].starts_with(b"&&") => return Some((i, "&&", "and")),
            None if bytes[i..].starts_with(b"||") => return Some((i, "||", "or")),
            None if b == b'!' && bytes.get(i + 1) != Some(&b'=') => return Some((i, "!", "not")),
            None => {}
        }
        i += 1;
    }
    None
}

/// Compiles and evaluates a condition in one go (`if`, `until`).
pub fn eval_bool<S: Serialize>(expression: &str, context: S) -> Result<bool, ExprError> {
    Expr::compile(expression)?.eval_bool(context)
}

/// One `${{ expr }}` inside a string.
#[derive(Debug, Clone, PartialEq)]
pub struct Interpolation {
    /// The expression text, trimmed.
    pub expr: String,
    /// Byte offset of the expression text inside the string.
    pub offset: usize,
    /// Byte range of the whole `${{ … }}`.
    pub range: std::ops::Range<usize>,
}

/// Every `${{ … }}` of a string, in order.
pub fn interpolations(text: &str) -> Result<Vec<Interpolation>, ExprError> {
    let mut found = Vec::new();
    let mut rest = 0;
    while let Some(start) = text[rest..].find("${{").map(|i| i + rest) {
        let inner_start = start + 3;
        let Some(len) = text[inner_start..].find("}}") else {
            return Err(ExprError::Unterminated {
                text: text.to_string(),
                offset: start,
            });
        };
        let raw = &text[inner_start..inner_start + len];
        let leading = raw.len() - raw.trim_start().len();
        found.push(Interpolation {
            expr: raw.trim().to_string(),
            offset: inner_start + leading,
            range: start..inner_start + len + 2,
        });
        rest = inner_start + len + 2;
    }
    Ok(found)
}

/// Replaces every `${{ expr }}` of `text` with its value.
pub fn interpolate<S: Serialize>(text: &str, context: S) -> Result<String, ExprError> {
    let context = minijinja::Value::from_serialize(context);
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for part in interpolations(text)? {
        out.push_str(&text[last..part.range.start]);
        let value = Expr::compile(&part.expr)?.eval(&context)?;
        out.push_str(&value.to_string());
        last = part.range.end;
    }
    out.push_str(&text[last..]);
    Ok(out)
}

/// Byte offset of the first use of the variable `name` in `text`: not as an attribute
/// (`x.name`) and not as part of a longer name.
pub fn find_variable(text: &str, name: &str) -> Option<usize> {
    let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(name).map(|(i, _)| i).find(|&i| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        !ident(before) && before != Some('.') && !ident(after)
    })
}

fn describe(error: &minijinja::Error) -> String {
    match error.detail() {
        Some(detail) => format!("{detail} ({})", error.kind()),
        None => error.kind().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn c_style_operators_are_refused_with_the_word_to_write() {
        for (text, word) in [
            ("steps.a.outputs.exit == 'done' && true", "and"),
            ("a || b", "or"),
            ("!steps.gate.outputs.approved", "not"),
        ] {
            let error = Expr::compile(text).unwrap_err().to_string();
            assert!(error.contains(&format!("write `{word}`")), "{error}");
        }
        assert!(Expr::compile("a != 'x && y' and not b").is_ok());
        assert!(Expr::compile("a == 'é' and b").is_ok());
    }

    #[test]
    fn conditions_read_step_outputs() {
        let expr = Expr::compile("steps.cycle.outputs.exit == 'done'").unwrap();
        let ctx = json!({"steps": {"cycle": {"outputs": {"exit": "done"}}}});
        assert!(expr.eval_bool(&ctx).unwrap());
        assert_eq!(
            expr.variables().into_iter().collect::<Vec<_>>(),
            ["steps.cycle.outputs.exit"]
        );
    }

    #[test]
    fn undefined_values_are_errors_not_false() {
        let expr = Expr::compile("steps.gate.outputs.approved").unwrap();
        let err = expr.eval_bool(json!({"steps": {}})).unwrap_err();
        assert!(matches!(err, ExprError::Eval { .. }), "{err}");
    }

    #[test]
    fn conditions_must_be_booleans() {
        let expr = Expr::compile("'false'").unwrap();
        assert!(matches!(
            expr.eval_bool(json!({})),
            Err(ExprError::NotBoolean { .. })
        ));
    }

    #[test]
    fn syntax_errors_have_an_offset() {
        let Err(ExprError::Syntax { offset, .. }) = Expr::compile("turn >") else {
            panic!("expected a syntax error");
        };
        assert!(offset.is_some());
    }

    #[test]
    fn finds_variables_not_attributes() {
        assert_eq!(find_variable("x.turn or turn", "turn"), Some(10));
        assert_eq!(find_variable("turns", "turn"), None);
    }

    #[test]
    fn interpolation_replaces_each_expression() {
        let text = "turn ${{ turn }} of ${{task.id}}";
        let parts = interpolations(text).unwrap();
        assert_eq!(parts[1].expr, "task.id");
        assert_eq!(&text[parts[1].offset..parts[1].offset + 7], "task.id");
        let out = interpolate(text, json!({"turn": 2, "task": {"id": "T-1"}})).unwrap();
        assert_eq!(out, "turn 2 of T-1");
        assert!(matches!(
            interpolations("a ${{ b"),
            Err(ExprError::Unterminated { offset: 2, .. })
        ));
    }
}
