//! OTLP's trace messages (opentelemetry-proto `trace/v1/trace.proto`, `common/v1`,
//! `collector/trace/v1`) in protobuf's wire format — only what autobuild sends: an
//! `ExportTraceServiceRequest` of one resource and one scope, spans with attributes, links and
//! a status. Field numbers are the official ones; a real OTLP receiver decodes what this
//! writes (`tests/suite/otel.rs`). Writing it here, a hundred lines, spares a protobuf and gRPC
//! stack for one message.

/// An attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Str(String),
    Bool(bool),
    Int(i64),
    Double(f64),
}

/// A finished span, as sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub parent: Option<[u8; 8]>,
    pub name: String,
    /// `true`: a call to something outside the runner (an agent), `SPAN_KIND_CLIENT`; else
    /// `SPAN_KIND_INTERNAL`.
    pub client: bool,
    pub start_unix_nano: u64,
    pub end_unix_nano: u64,
    pub attributes: Vec<(String, Value)>,
    /// Spans of other traces this one stands for (a feature's tasks).
    pub links: Vec<([u8; 16], [u8; 8])>,
    /// `Some(message)`: the span failed (`STATUS_CODE_ERROR`); `None`: unset.
    pub error: Option<String>,
}

/// `ExportTraceServiceRequest` with one `ResourceSpans` (the resource's `attributes`) and one
/// `ScopeSpans` (scope `scope` at `version`).
pub fn export_request(
    resource: &[(String, Value)],
    scope: &str,
    version: &str,
    spans: &[Span],
) -> Vec<u8> {
    let mut resource_msg = Vec::new();
    for attribute in resource {
        message(&mut resource_msg, 1, &key_value(attribute));
    }
    let mut scope_msg = Vec::new();
    string(&mut scope_msg, 1, scope);
    string(&mut scope_msg, 2, version);
    let mut scope_spans = Vec::new();
    message(&mut scope_spans, 1, &scope_msg);
    for span in spans {
        message(&mut scope_spans, 2, &span_msg(span));
    }
    let mut resource_spans = Vec::new();
    message(&mut resource_spans, 1, &resource_msg);
    message(&mut resource_spans, 2, &scope_spans);
    let mut request = Vec::new();
    message(&mut request, 1, &resource_spans);
    request
}

fn span_msg(span: &Span) -> Vec<u8> {
    let mut out = Vec::new();
    bytes(&mut out, 1, &span.trace_id);
    bytes(&mut out, 2, &span.span_id);
    if let Some(parent) = &span.parent {
        bytes(&mut out, 4, parent);
    }
    string(&mut out, 5, &span.name);
    varint_field(&mut out, 6, if span.client { 3 } else { 1 });
    fixed64(&mut out, 7, span.start_unix_nano);
    fixed64(&mut out, 8, span.end_unix_nano);
    for attribute in &span.attributes {
        message(&mut out, 9, &key_value(attribute));
    }
    for (trace, span_id) in &span.links {
        let mut link = Vec::new();
        bytes(&mut link, 1, trace);
        bytes(&mut link, 2, span_id);
        message(&mut out, 13, &link);
    }
    if let Some(error) = &span.error {
        let mut status = Vec::new();
        string(&mut status, 2, error);
        varint_field(&mut status, 3, 2);
        message(&mut out, 15, &status);
    }
    out
}

fn key_value((key, value): &(String, Value)) -> Vec<u8> {
    let mut any = Vec::new();
    match value {
        Value::Str(text) => string(&mut any, 1, text),
        Value::Bool(flag) => varint_field(&mut any, 2, u64::from(*flag)),
        // int64 is a varint of the two's complement.
        Value::Int(n) => varint_field(&mut any, 3, *n as u64),
        Value::Double(x) => fixed64(&mut any, 4, x.to_bits()),
    }
    let mut out = Vec::new();
    string(&mut out, 1, key);
    message(&mut out, 2, &any);
    out
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u32) {
    varint(out, u64::from(field << 3 | wire));
}

fn varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn varint_field(out: &mut Vec<u8>, field: u32, n: u64) {
    tag(out, field, 0);
    varint(out, n);
}

fn fixed64(out: &mut Vec<u8>, field: u32, n: u64) {
    tag(out, field, 1);
    out.extend_from_slice(&n.to_le_bytes());
}

fn bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    tag(out, field, 2);
    varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

fn string(out: &mut Vec<u8>, field: u32, text: &str) {
    bytes(out, field, text.as_bytes());
}

fn message(out: &mut Vec<u8>, field: u32, encoded: &[u8]) {
    bytes(out, field, encoded);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_fields_are_protobufs() {
        let mut out = Vec::new();
        varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
        let mut out = Vec::new();
        varint_field(&mut out, 3, (-1i64) as u64);
        assert_eq!(
            out.len(),
            11,
            "a negative int64 takes ten bytes after its tag"
        );
        let mut out = Vec::new();
        string(&mut out, 1, "ab");
        assert_eq!(out, [0x0a, 0x02, b'a', b'b']);
        let mut out = Vec::new();
        fixed64(&mut out, 7, 1);
        assert_eq!(out, [0x39, 1, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn a_key_value_is_a_key_and_an_any_value() {
        let encoded = key_value(&("k".to_string(), Value::Bool(true)));
        // KeyValue{key: "k", value: AnyValue{bool_value: true}}
        assert_eq!(encoded, [0x0a, 0x01, b'k', 0x12, 0x02, 0x10, 0x01]);
    }
}
