//! Prompt templates: the prompts path, compiling, checking and rendering.
//!
//! Templates are found by file name along the prompts path (built-in `prompts/`, then the user's
//! `prompts/`, then the repo's `.autobuild/prompts/`; a later one with the same name wins) and are
//! rendered with minijinja in strict mode: a template that reads something the context does not
//! have fails instead of rendering an empty string into an agent's instructions. Validation checks
//! every variable a template reads against [`PROMPT_VARIABLES`] and the shape of
//! [`PromptContext::example`], so such mistakes surface before a run starts.

use std::collections::BTreeMap;
use std::sync::Arc;

use minijinja::{Environment, UndefinedBehavior};
use serde_json::Value as Json;

use crate::workflow::close_or_listed;
use crate::workflow::context::{PromptContext, PROMPT_VARIABLES};
use crate::workflow::expr::find_variable;
use base::diagnostic::{did_you_mean, Diagnostic, Location};
use base::user_file::source::Source;

/// The prompt templates visible to one workflow, compiled.
#[derive(Clone)]
pub struct Prompts {
    sources: BTreeMap<String, Arc<Source>>,
    env: Environment<'static>,
    /// Templates that did not compile, with the compiler's error.
    broken: BTreeMap<String, Arc<minijinja::Error>>,
}

impl std::fmt::Debug for Prompts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.sources.keys()).finish()
    }
}

impl Prompts {
    /// Compiles the templates; `files` in precedence order, lowest first, each named by the last
    /// component of its path.
    pub fn new(files: impl IntoIterator<Item = Arc<Source>>) -> Prompts {
        let mut sources = BTreeMap::new();
        for source in files {
            let name = source
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            sources.insert(name, source);
        }
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_keep_trailing_newline(true);
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        let mut broken = BTreeMap::new();
        for (name, source) in &sources {
            if let Err(e) = env.add_template_owned(name.clone(), source.text.clone()) {
                broken.insert(name.clone(), Arc::new(e));
            }
        }
        Prompts {
            sources,
            env,
            broken,
        }
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.sources.keys().map(String::as_str)
    }

    pub fn source(&self, name: &str) -> Option<&Arc<Source>> {
        self.sources.get(name)
    }

    /// Renders a template; a failure is a located problem in the template file.
    pub fn render(&self, name: &str, context: &PromptContext) -> Result<String, Diagnostic> {
        let Some(source) = self.sources.get(name) else {
            return Err(Diagnostic::new(
                name,
                format!("no prompt template `{name}`"),
            ));
        };
        if let Some(error) = self.broken.get(name) {
            return Err(template_error(source, error));
        }
        self.env
            .get_template(name)
            .and_then(|t| t.render(context))
            .map_err(|e| template_error(source, &e))
    }

    /// Everything wrong with template `name`: it does not compile, or reads variables the
    /// prompt context does not have. Empty when it is fine (or unknown: see [`Prompts::source`]).
    pub fn check(&self, name: &str) -> Vec<Diagnostic> {
        let Some(source) = self.sources.get(name) else {
            return Vec::new();
        };
        if let Some(error) = self.broken.get(name) {
            return vec![template_error(source, error)];
        }
        let Ok(template) = self.env.get_template(name) else {
            return Vec::new();
        };
        let example = serde_json::to_value(PromptContext::example()).unwrap_or(Json::Null);
        let mut variables: Vec<String> = template.undeclared_variables(true).into_iter().collect();
        variables.sort();
        let unknown: Vec<Diagnostic> = variables
            .iter()
            .filter_map(|path| unknown_variable(path, &example))
            .map(|unknown| {
                let offset = find_variable(&source.text, &unknown.path).unwrap_or(0);
                let message = format!("unknown variable `{}`", unknown.path);
                Diagnostic::at_offset(&source.path, &source.text, offset, message)
                    .with_help(unknown.help)
            })
            .collect();
        if !unknown.is_empty() {
            return unknown;
        }
        // Rendered as a run renders it: on turn 1 there is no feedback yet, so an unguarded
        // `{{ feedback.summary }}` would refuse every run. The `steps.…` outputs it reads are
        // given sample values (which steps may be read where is the workflow validator's check).
        let example = PromptContext {
            steps: sample_step_outputs(&self.step_references(name)),
            ..PromptContext::example()
        };
        let turn_one = PromptContext {
            feedback: None,
            stall_notice: None,
            ..example.clone()
        };
        let renders = [
            ("turn 1, which has no `feedback` yet", turn_one),
            ("a later turn", example),
        ];
        for (when, context) in renders {
            if let Err(error) = template.render(&context) {
                let mut problem = template_error(source, &error);
                problem.message = format!("{} (rendering it for {when})", problem.message);
                return vec![problem.with_help(
                    "a run renders the template on every turn: guard what a turn may lack, e.g. \
                     `{% if feedback %}{{ feedback.summary }}{% endif %}`",
                )];
            }
        }
        Vec::new()
    }
}

impl Prompts {
    /// The `steps.…` paths template `name` reads (`steps.plan.outputs.text`), each with the
    /// byte offset of its first use; the workflow validator checks them against the steps that
    /// run before each step using the template (the template alone cannot tell).
    pub fn step_references(&self, name: &str) -> Vec<(String, usize)> {
        let (Some(source), Ok(template)) = (self.sources.get(name), self.env.get_template(name))
        else {
            return Vec::new();
        };
        let mut paths: Vec<String> = template
            .undeclared_variables(true)
            .into_iter()
            .filter(|path| path == "steps" || path.starts_with("steps."))
            .collect();
        paths.sort();
        paths
            .into_iter()
            .map(|path| {
                let offset = find_variable(&source.text, &path).unwrap_or(0);
                (path, offset)
            })
            .collect()
    }
}

/// `steps.<id>.outputs.<name>` for every such path in `references`, each a sample text, so a
/// template that reads the outputs of earlier steps can be rendered as a check.
fn sample_step_outputs(references: &[(String, usize)]) -> serde_json::Map<String, Json> {
    let mut steps = serde_json::Map::new();
    for (path, _) in references {
        let parts: Vec<&str> = path.split('.').collect();
        if let ["steps", id, "outputs", output, ..] = parts.as_slice() {
            let step = steps
                .entry(id.to_string())
                .or_insert_with(|| serde_json::json!({"outputs": {}}));
            if let Some(outputs) = step.get_mut("outputs").and_then(Json::as_object_mut) {
                outputs.insert(
                    output.to_string(),
                    Json::String(format!("(the {output} of step `{id}`)")),
                );
            }
        }
    }
    steps
}

/// A variable path a template reads that the context does not have.
struct UnknownVariable {
    /// The part of the path that is unknown, including what leads to it (`task.titel`).
    path: String,
    help: String,
}

/// Whether `path` (`task.titel`) is missing from the context, judged by its example.
fn unknown_variable(path: &str, example: &Json) -> Option<UnknownVariable> {
    let mut segments = path.split('.');
    let top = segments.next()?;
    if top == "steps" {
        // Checked against the workflow: see `Prompts::step_references`.
        return None;
    }
    if !PROMPT_VARIABLES.contains(&top) {
        let help = close_or_listed(top, PROMPT_VARIABLES, "prompts can use");
        return Some(UnknownVariable {
            path: top.to_string(),
            help,
        });
    }
    let mut value = example.get(top)?;
    let mut walked = top.to_string();
    for segment in segments {
        let object = value.as_object()?;
        match object.get(segment) {
            Some(next) => value = next,
            None => {
                let help = match did_you_mean(segment, object.keys().map(String::as_str)) {
                    Some(close) => format!("did you mean `{walked}.{close}`?"),
                    None => format!(
                        "`{walked}` has: {}",
                        object.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                };
                return Some(UnknownVariable {
                    path: format!("{walked}.{segment}"),
                    help,
                });
            }
        }
        walked = format!("{walked}.{segment}");
    }
    None
}

fn template_error(source: &Source, error: &minijinja::Error) -> Diagnostic {
    let message = match error.detail() {
        Some(detail) => format!("{}: {detail}", error.kind()),
        None => error.kind().to_string(),
    };
    match (error.range(), error.line()) {
        (Some(range), _) => Diagnostic::at_offset(&source.path, &source.text, range.start, message),
        (None, Some(line)) => Diagnostic::at(
            &source.path,
            &source.text,
            Location { line, column: 1 },
            message,
        ),
        (None, None) => Diagnostic::new(&source.path, message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base::user_file::source::Layer;

    fn prompts(files: &[(&str, &str)]) -> Prompts {
        Prompts::new(
            files
                .iter()
                .map(|(name, text)| Source::new(format!("prompts/{name}"), *text, Layer::Repo)),
        )
    }

    #[test]
    fn renders_with_the_context() {
        let p = prompts(&[("p.md", "Task {{ task.id }}: {{ task.title }}\n")]);
        let text = p.render("p.md", &PromptContext::example()).unwrap();
        assert_eq!(text, "Task TASK-001: Add greeting function\n");
        assert!(p.check("p.md").is_empty());
    }

    #[test]
    fn later_files_win_by_name() {
        let p = Prompts::new([
            Source::new("a/p.md", "one", Layer::BuiltIn),
            Source::new("b/p.md", "two", Layer::Repo),
        ]);
        assert_eq!(p.render("p.md", &PromptContext::example()).unwrap(), "two");
    }

    #[test]
    fn unknown_variables_and_attributes_are_located() {
        let p = prompts(&[(
            "p.md",
            "Hello\n{{ taks.id }}\n{% if feedback %}{{ feedback.sumary }}{% endif %}\n",
        )]);
        let problems = p.check("p.md");
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert_eq!(problems[0].message, "unknown variable `feedback.sumary`");
        assert_eq!(
            problems[0].help.as_deref(),
            Some("did you mean `feedback.summary`?")
        );
        assert_eq!(problems[0].location.unwrap().line, 3);
        assert_eq!(problems[1].message, "unknown variable `taks`");
        assert_eq!(
            problems[1].location.unwrap(),
            Location { line: 2, column: 4 }
        );
    }

    #[test]
    fn syntax_errors_are_located() {
        let p = prompts(&[("p.md", "Hello\n{{ task.id }\n")]);
        let problems = p.check("p.md");
        assert_eq!(problems[0].location.unwrap().line, 2);
        assert!(p.render("p.md", &PromptContext::example()).is_err());
    }

    #[test]
    fn a_template_that_fails_on_turn_one_is_located_in_the_template() {
        let p = prompts(&[(
            "p.md",
            "Task {{ task.id }}\nLast time: {{ feedback.summary }}\n",
        )]);
        let problems = p.check("p.md");
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert!(
            problems[0].message.contains("rendering it for turn 1"),
            "{problems:#?}"
        );
        assert_eq!(problems[0].location.map(|l| l.line), Some(2));
        let guarded = prompts(&[(
            "p.md",
            "{% if feedback %}{{ feedback.summary }}{% endif %}\n",
        )]);
        assert!(guarded.check("p.md").is_empty());
    }
}
