//! Newline-delimited JSON-RPC 2.0, as the MCP stdio transport carries it:
//! reading one line with a bound on its length (a longer line is skipped in
//! small pieces, never held), and telling a request, a notification and a
//! response apart. What the messages mean is the front end's
//! (`lisa-context mcp`); this is only the framing, kept small so that it
//! can be fuzzed whole (`fuzz/fuzz_targets/jsonrpc.rs`).

use std::io::{self, BufRead, Read};

use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The longest line [`read_line`] hands over by default (4 MiB).
pub const MAX_MESSAGE: usize = 4 << 20;

/// JSON-RPC's error codes that the framing answers with.
pub mod codes {
    /// The line is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// JSON, but not a JSON-RPC 2.0 message (or a batch, or too long).
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The method's parameters are wrong (MCP: an unknown resource too).
    pub const INVALID_PARAMS: i64 = -32602;
    /// The server failed.
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// One line read.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line (its newline and surrounding blanks trimmed; never empty).
    Message(Vec<u8>),
    /// A line longer than the bound: its bytes were read and dropped.
    TooLong,
}

/// Reads the next non-blank line of at most `max` bytes; `None` at the end
/// of the input. A longer line is consumed 64 KiB at a time and dropped, so
/// memory stays within `max` whatever the line's length.
pub fn read_line(
    input: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<Option<Line>> {
    loop {
        buf.clear();
        let n = input.by_ref().take(max as u64 + 1).read_until(b'\n', buf)?;
        if n == 0 {
            return Ok(None);
        }
        if buf.len() > max && !buf.ends_with(b"\n") {
            buf.clear();
            buf.shrink_to(64 * 1024);
            let mut rest = Vec::with_capacity(64 * 1024);
            loop {
                rest.clear();
                let m = input
                    .by_ref()
                    .take(64 * 1024)
                    .read_until(b'\n', &mut rest)?;
                if m == 0 || rest.ends_with(b"\n") {
                    break;
                }
            }
            return Ok(Some(Line::TooLong));
        }
        let trimmed = buf.trim_ascii();
        if !trimmed.is_empty() {
            return Ok(Some(Line::Message(trimmed.to_vec())));
        }
    }
}

/// A message's `id`, exactly as written (a string or a number).
#[derive(Debug, Clone)]
pub struct Id(Box<RawValue>);

impl Id {
    /// The id as JSON text.
    pub fn json(&self) -> &str {
        self.0.get()
    }

    /// An id of the server's own (for a request it sends).
    pub fn string(s: &str) -> Self {
        let text = Value::String(s.to_string()).to_string();
        Id(RawValue::from_string(text).unwrap_or_else(|_| RawValue::NULL.to_owned()))
    }
}

impl PartialEq for Id {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}

/// One message received.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request: an answer is due.
    Request {
        /// Its id.
        id: Id,
        /// The method.
        method: String,
        /// The parameters (`null` when there were none).
        params: Value,
    },
    /// A notification: no answer.
    Notification {
        /// The method.
        method: String,
        /// The parameters (`null` when there were none).
        params: Value,
    },
    /// A response to a request this side sent.
    Response {
        /// The id of that request.
        id: Id,
        /// `result`, or `error`.
        outcome: Result<Value, Value>,
    },
}

/// Why a line is not a message, with the answer due: the code, the message,
/// and the id when one could be read.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// [`codes::PARSE_ERROR`] or [`codes::INVALID_REQUEST`].
    pub code: i64,
    /// For a person.
    pub message: String,
    /// The id, when the line had a usable one.
    pub id: Option<Id>,
}

/// Reads one line as a JSON-RPC 2.0 message. A batch (an array) is refused:
/// MCP sends none since its 2025-06-18 revision.
pub fn parse(line: &[u8]) -> Result<Message, Invalid> {
    let invalid = |code, message: String, id| Invalid { code, message, id };
    let whole: &RawValue = serde_json::from_slice(line)
        .map_err(|e| invalid(codes::PARSE_ERROR, e.to_string(), None))?;
    if !whole.get().starts_with('{') {
        return Err(invalid(
            codes::INVALID_REQUEST,
            "a message is a JSON object (batches are not accepted)".into(),
            None,
        ));
    }
    let mut members: Map<String, Value> = Map::new();
    let mut id = None;
    let raw: std::collections::HashMap<&str, &RawValue> = serde_json::from_str(whole.get())
        .map_err(|e| invalid(codes::INVALID_REQUEST, e.to_string(), None))?;
    for (name, value) in raw {
        if name == "id" {
            let text = value.get();
            // A number JSON readers can hold (not `1e999`), so that the
            // id written back is one the client can read.
            if (text.starts_with('"')
                || text.starts_with(['-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9']))
                && serde_json::from_str::<Value>(text).is_ok()
            {
                id = Some(Id(value.to_owned()));
            } else if text != "null" {
                return Err(invalid(
                    codes::INVALID_REQUEST,
                    "\"id\" is a string or a number".into(),
                    None,
                ));
            }
            continue;
        }
        let v: Value = serde_json::from_str(value.get())
            .map_err(|e| invalid(codes::INVALID_REQUEST, e.to_string(), id.clone()))?;
        members.insert(name.to_string(), v);
    }
    if members.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid(
            codes::INVALID_REQUEST,
            "\"jsonrpc\" must be \"2.0\"".into(),
            id,
        ));
    }
    let params = members.remove("params").unwrap_or(Value::Null);
    if !matches!(params, Value::Null | Value::Object(_) | Value::Array(_)) {
        return Err(invalid(
            codes::INVALID_REQUEST,
            "\"params\" is an object or an array".into(),
            id,
        ));
    }
    match (members.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => Ok(Message::Request { id, method, params }),
        (Some(Value::String(method)), None) => Ok(Message::Notification { method, params }),
        (Some(_), id) => Err(invalid(
            codes::INVALID_REQUEST,
            "\"method\" is a string".into(),
            id,
        )),
        (None, Some(id)) => match (members.remove("result"), members.remove("error")) {
            (Some(result), None) => Ok(Message::Response {
                id,
                outcome: Ok(result),
            }),
            (None, Some(error)) => Ok(Message::Response {
                id,
                outcome: Err(error),
            }),
            _ => Err(invalid(
                codes::INVALID_REQUEST,
                "a response has \"result\" or \"error\"".into(),
                Some(id),
            )),
        },
        (None, None) => Err(invalid(
            codes::INVALID_REQUEST,
            "a message has a \"method\" or an \"id\"".into(),
            None,
        )),
    }
}

/// A response line (with its newline): `result` for `id`.
pub fn result_line(id: &Id, result: &Value) -> Vec<u8> {
    let mut line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":", id.json()).into_bytes();
    line.extend_from_slice(result.to_string().as_bytes());
    line.extend_from_slice(b"}\n");
    line
}

/// An error response line (with its newline); the id is `null` when the
/// request's could not be read.
pub fn error_line(id: Option<&Id>, code: i64, message: &str) -> Vec<u8> {
    let error = serde_json::json!({ "code": code, "message": message });
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{}}}\n",
        id.map_or("null", Id::json),
        error
    )
    .into_bytes()
}

/// A request or notification line (with its newline) this side sends.
pub fn request_line(id: Option<&Id>, method: &str, params: &Value) -> Vec<u8> {
    let mut message = Map::new();
    message.insert("jsonrpc".into(), "2.0".into());
    message.insert("method".into(), method.into());
    if !params.is_null() {
        message.insert("params".into(), params.clone());
    }
    let mut text = Value::Object(message).to_string();
    if let Some(id) = id {
        // The id first would be nicer to read; any order is JSON.
        text.pop();
        text.push_str(",\"id\":");
        text.push_str(id.json());
        text.push('}');
    }
    text.push('\n');
    text.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_told_apart() {
        let m = parse(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).unwrap();
        assert!(matches!(m, Message::Request { ref method, .. } if method == "ping"));
        let m = parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap();
        assert!(matches!(m, Message::Notification { .. }));
        let m = parse(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#).unwrap();
        assert!(matches!(m, Message::Response { outcome: Ok(_), .. }));
        assert_eq!(parse(b"nope").unwrap_err().code, codes::PARSE_ERROR);
        assert_eq!(parse(b"[]").unwrap_err().code, codes::INVALID_REQUEST);
        assert_eq!(
            parse(br#"{"jsonrpc":"1.0","id":1,"method":"x"}"#)
                .unwrap_err()
                .code,
            codes::INVALID_REQUEST
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":{},"method":"x"}"#)
                .unwrap_err()
                .code,
            codes::INVALID_REQUEST
        );
    }

    #[test]
    fn ids_come_back_as_written() {
        let Message::Request { id, .. } =
            parse(br#"{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"x"}"#)
                .unwrap()
        else {
            panic!()
        };
        let line = result_line(&id, &Value::Null);
        assert!(
            String::from_utf8(line)
                .unwrap()
                .contains("123456789012345678901234567890")
        );
    }

    #[test]
    fn a_long_line_is_dropped_in_pieces() {
        let mut input = Vec::new();
        input.extend(std::iter::repeat_n(b'x', 300_000));
        input.extend_from_slice(b"\n{\"a\":1}\n");
        let mut reader = std::io::BufReader::new(&input[..]);
        let mut buf = Vec::new();
        assert_eq!(
            read_line(&mut reader, &mut buf, 1000).unwrap(),
            Some(Line::TooLong)
        );
        assert!(buf.capacity() <= 64 * 1024 + 2048);
        assert_eq!(
            read_line(&mut reader, &mut buf, 1000).unwrap(),
            Some(Line::Message(b"{\"a\":1}".to_vec()))
        );
        assert_eq!(read_line(&mut reader, &mut buf, 1000).unwrap(), None);
    }
}
