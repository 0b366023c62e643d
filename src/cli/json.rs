//! JSON for a terminal: `snapshot --format json` and `access --format json`
//! are often read by a person, so every character a terminal would act on or
//! not show is written as a `\u` escape (serde_json escapes only C0 controls,
//! `"` and `\`; a C1 control, DEL, a bidi override or a line separator in a
//! repository's file name would reach the terminal raw). A JSON reader
//! decodes the escapes to the same text, so the value is unchanged.

use std::borrow::Cow;
use std::io::{self, Write};

use lisa_context::snapshot::terminal_safe;
use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};

/// `value` as pretty JSON with a final line feed, terminal-safe (see the
/// module documentation).
pub(super) fn pretty(value: &impl Serialize) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(4096);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, TerminalSafe::default());
    value.serialize(&mut ser)?;
    out.push(b'\n');
    // Only whole strings and escapes were written.
    String::from_utf8(out).map_err(|e| serde::ser::Error::custom(e.to_string()))
}

/// serde_json's pretty formatter, with string fragments escaped further.
#[derive(Default)]
struct TerminalSafe(PrettyFormatter<'static>);

/// Whether a terminal would act on `c`, or not show it.
fn unsafe_for_terminal(c: char) -> bool {
    if c.is_ascii() {
        // A fragment holds no C0 control, `"` or `\` (serde_json escapes
        // those itself); DEL is the one ASCII character left to escape.
        return c == '\u{7f}';
    }
    let mut buf = [0u8; 4];
    matches!(terminal_safe(c.encode_utf8(&mut buf)), Cow::Owned(_))
}

impl Formatter for TerminalSafe {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut copied = 0;
        for (at, c) in fragment.char_indices() {
            if !unsafe_for_terminal(c) {
                continue;
            }
            writer.write_all(&fragment.as_bytes()[copied..at])?;
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(writer, "\\u{unit:04x}")?;
            }
            copied = at + c.len_utf8();
        }
        writer.write_all(&fragment.as_bytes()[copied..])
    }

    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_array(writer)
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array(writer)
    }

    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_array_value(writer)
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object(writer)
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object(writer)
    }

    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.begin_object_value(writer)
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.0.end_object_value(writer)
    }
}
