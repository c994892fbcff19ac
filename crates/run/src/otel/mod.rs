//! OpenTelemetry traces (docs/telemetry.md): with `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as
//! it is) or `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` appended) set, each run session is
//! exported as spans of the run's trace over OTLP/HTTP in protobuf, the standard default —
//! built from the records when the session ends ([`spans`]), so no turn waits on the exporter;
//! the one POST is bounded ([`EXPORT_TIMEOUT`]). `OTEL_EXPORTER_OTLP_HEADERS` (and the
//! traces-specific variable) add headers (`key=value,key=value`). A feature's run is a trace of
//! its own whose task spans link to each task's trace.
//!
//! An unreachable or refusing endpoint is the caller's warning, never a failed run.

pub mod proto;
pub mod spans;

use std::time::{Duration, Instant};

use agents::native::http::{self, Body, Bounds, Request};
use sha2::{Digest, Sha256};

/// The longest the export may take at the end of a session.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(5);

/// Where traces go, read with `var`; `None` when tracing is off.
pub fn endpoint(var: impl Fn(&str) -> Option<String>) -> Option<String> {
    let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
    if let Some(url) = set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        return Some(url.trim().to_string());
    }
    set("OTEL_EXPORTER_OTLP_ENDPOINT")
        .map(|base| format!("{}/v1/traces", base.trim().trim_end_matches('/')))
}

/// The extra headers (`key=value,…`; the traces-specific variable's win).
pub fn headers(var: impl Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    let mut headers: Vec<(String, String)> = Vec::new();
    for name in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    ] {
        for pair in var(name).unwrap_or_default().split(',') {
            if let Some((key, value)) = pair.split_once('=') {
                let key = key.trim().to_ascii_lowercase();
                if key.is_empty() {
                    continue;
                }
                headers.retain(|(k, _)| *k != key);
                headers.push((key, value.trim().to_string()));
            }
        }
    }
    headers
}

/// A new trace id, unique to `seed` and this moment.
pub fn new_trace_id(seed: &str) -> [u8; 16] {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let digest = Sha256::new()
        .chain_update(seed)
        .chain_update(now.to_le_bytes())
        .chain_update(std::process::id().to_le_bytes())
        .finalize();
    let mut id = [0u8; 16];
    id.copy_from_slice(&digest[..16]);
    id
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A trace id from its hex form (as `state.json` keeps it).
pub fn trace_id_of(hex: &str) -> Option<[u8; 16]> {
    let mut id = [0u8; 16];
    if hex.len() != 32 {
        return None;
    }
    for (i, byte) in id.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(id)
}

/// Exports `spans` to `url`; the reason when it did not work.
pub fn export(
    url: &str,
    headers: Vec<(String, String)>,
    spans: &[proto::Span],
) -> Result<(), String> {
    let resource = [
        (
            "service.name".to_string(),
            proto::Value::Str("autobuild".into()),
        ),
        (
            "service.version".to_string(),
            proto::Value::Str(env!("CARGO_PKG_VERSION").into()),
        ),
    ];
    let body = proto::export_request(&resource, "autobuild", env!("CARGO_PKG_VERSION"), spans);
    let request = Request {
        method: "POST",
        url: url.to_string(),
        headers,
        body: Some(Body {
            bytes: body,
            content_type: "application/x-protobuf",
        }),
    };
    let bounds = Bounds {
        deadline: Instant::now() + EXPORT_TIMEOUT,
        idle: None,
    };
    match http::exchange(request, &bounds, &process::CancelToken::new()) {
        Ok(answer) if (200..300).contains(&answer.status) => Ok(()),
        Ok(answer) => Err(format!(
            "{url} answered HTTP {}: {}",
            answer.status,
            answer.body.chars().take(200).collect::<String>()
        )),
        Err(http::Failure::Transport(e)) => Err(e.to_string()),
        Err(http::Failure::Stopped(_)) => Err(format!(
            "{url} did not answer within {}s",
            EXPORT_TIMEOUT.as_secs()
        )),
    }
}

/// Exports the last session of the run recorded in `paths` as spans of its trace (made, and
/// recorded in `state`, on its first export); `roles` are each role's adapter and model. The
/// reason when it did not work (`Ok` when tracing is off).
pub fn export_run(
    paths: &crate::engine::paths::RunPaths,
    state: &mut crate::engine::state::RunState,
    roles: &std::collections::BTreeMap<String, (String, Option<String>)>,
    outcome: &str,
) -> Result<(), String> {
    let var = |name: &str| std::env::var(name).ok();
    let Some(url) = endpoint(var) else {
        return Ok(());
    };
    let trace_id = match state.trace_id.as_deref().and_then(trace_id_of) {
        Some(id) => id,
        None => new_trace_id(&format!("{}@{}", state.task_id, state.started_at)),
    };
    state.trace_id = Some(hex(&trace_id));
    let events = crate::engine::events::read_events(&paths.events()).unwrap_or_default();
    let turns = crate::engine::records::load_turns(paths, state);
    let spans = spans::run_spans(&spans::RunFacts {
        trace_id,
        task: &state.task_id,
        workflow: &state.workflow,
        outcome,
        events: spans::last_session(&events),
        turns: &turns,
        roles,
    });
    export(&url, headers(var), &spans)
}

/// Exports a finished feature run as a trace of its own, each task span linked to the task's
/// trace; the reason when it did not work (`Ok` when tracing is off).
pub fn export_feature(
    state: &mut crate::feature::state::FeatureState,
    runs_dir: &std::path::Path,
) -> Result<(), String> {
    let var = |name: &str| std::env::var(name).ok();
    let Some(url) = endpoint(var) else {
        return Ok(());
    };
    let trace = state
        .trace_id
        .as_deref()
        .and_then(trace_id_of)
        .unwrap_or_else(|| new_trace_id(&format!("{}@{}", state.feature_id, state.started_at)));
    state.trace_id = Some(hex(&trace));
    let mut links = std::collections::BTreeMap::new();
    for id in state.tasks.keys() {
        let paths = crate::engine::paths::RunPaths::new(runs_dir, id);
        let Ok(task) = crate::engine::state::RunState::load(&paths.state()) else {
            continue;
        };
        let Some(task_trace) = task.trace_id.as_deref().and_then(trace_id_of) else {
            continue;
        };
        let events = crate::engine::events::read_events(&paths.events()).unwrap_or_default();
        links.insert(
            id.clone(),
            (
                task_trace,
                spans::run_span_id(&task_trace, spans::last_session(&events)),
            ),
        );
    }
    export(
        &url,
        headers(var),
        &spans::feature_spans(trace, state, &links),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(set: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            set.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_standard_variables_say_where_traces_go() {
        assert_eq!(endpoint(vars(&[])), None);
        assert_eq!(
            endpoint(vars(&[(
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                "http://127.0.0.1:4318/"
            )])),
            Some("http://127.0.0.1:4318/v1/traces".into())
        );
        assert_eq!(
            endpoint(vars(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"),
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b/traces"),
            ])),
            Some("http://b/traces".into())
        );
        assert_eq!(
            headers(vars(&[
                (
                    "OTEL_EXPORTER_OTLP_HEADERS",
                    "Authorization=Bearer x, team=a"
                ),
                ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "team=b,=bad"),
            ])),
            vec![
                ("authorization".to_string(), "Bearer x".to_string()),
                ("team".to_string(), "b".to_string())
            ]
        );
    }

    #[test]
    fn trace_ids_round_trip_through_hex() {
        let id = new_trace_id("TASK-1");
        assert_eq!(trace_id_of(&hex(&id)), Some(id));
        assert_eq!(trace_id_of("xyz"), None);
    }
}
