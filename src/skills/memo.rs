//! The frontmatter memo: parsed `SKILL.md` frontmatter kept in a file of
//! the home root (`skills.frontmatter-memo-file`), so that a new process
//! does not parse again the YAML an earlier one parsed. YAML parsing is
//! the dearest step of a cold snapshot; reading one entry back costs a
//! small fraction of it.
//!
//! An entry is keyed by the hash of the exact bytes parsed and by the
//! reading (strict or lenient), and the file names the version of
//! lisa-context that wrote it: an entry is what this very parser made of
//! those very bytes, so using it answers exactly what parsing them again
//! would. Refusals are kept too (a frontmatter that fails is not parsed
//! again by the next process): by the error's kind, and for a YAML error
//! its message cut to [`MAX_MESSAGE_BYTES`] (what is made of a refusal is
//! its reason, which the kind decides).
//!
//! The file is a cache, never an authority: one that is missing, a link, a
//! FIFO, too large, of another version or damaged is ignored (a damaged
//! line alone is skipped); it is replaced whole, atomically, only when its
//! content would change (a build parsed something it did not hold and
//! there is room for it, or entries went unused while new ones wait), and
//! never grows past `skills.frontmatter-memo-max-bytes`: the entries the
//! last build used are kept first, then the new ones, then the others, so
//! a full memo reaches a content that the next build leaves as it is.
//! Nothing read from it enters a trace or a fingerprint.
//!
//! The hash is xxh3-128, not a cryptographic one. Someone able to forge a
//! collision with a memo entry gets, for their file, another frontmatter
//! that this parser accepted: one they could have written themselves. The
//! trust gate hashes the listed text itself, not through the memo.
//!
//! Format: a header line, then one line per entry: 32 hex digits of the
//! hash, two for the reading's code (`00` strict, `01` lenient, others for
//! the other fence, scalar, fallback, duplicate-key and body rules), a
//! space, and the entry as compact
//! JSON (which holds no raw line break): the parsed fields, or `{"e": kind}`
//! (with `"y"`, the message, for a YAML error) for a refusal.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::frontmatter::{Frontmatter, FrontmatterError};

/// The key of a parse: the hash of the bytes, and the reading's code
/// ([`Reading::code`](super::frontmatter::Reading::code)).
pub(crate) type Key = (u128, u8);

/// The first line of a memo written by this build of lisa-context.
fn header() -> String {
    format!(
        "lisa-context frontmatter memo 4 {}\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// The longest YAML error message a remembered refusal keeps, in bytes.
pub(crate) const MAX_MESSAGE_BYTES: usize = 1024;

/// A parse result, as the cache hands it out.
pub(crate) type Parsed = Result<(Frontmatter, Option<String>), FrontmatterError>;

/// A remembered refusal, as stored.
#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct Refusal {
    /// The error's kind.
    #[serde(rename = "e")]
    kind: String,
    /// A YAML error's message.
    #[serde(rename = "y", default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

impl Refusal {
    fn new(e: &FrontmatterError) -> Self {
        let (kind, message) = match e {
            FrontmatterError::NoOpeningFence => ("no-opening-fence", None),
            FrontmatterError::NoClosingFence => ("no-closing-fence", None),
            FrontmatterError::Yaml(m) => {
                let cut = crate::vocab::text::floor_char_boundary(m, MAX_MESSAGE_BYTES);
                ("yaml", Some(m[..cut].to_string()))
            }
            FrontmatterError::NotAMapping => ("not-a-mapping", None),
            FrontmatterError::MissingName => ("missing-name", None),
            FrontmatterError::MissingDescription => ("missing-description", None),
        };
        Self {
            kind: kind.to_string(),
            message,
        }
    }

    fn into_error(self) -> Option<FrontmatterError> {
        Some(match (self.kind.as_str(), self.message) {
            ("no-opening-fence", None) => FrontmatterError::NoOpeningFence,
            ("no-closing-fence", None) => FrontmatterError::NoClosingFence,
            ("yaml", Some(m)) => FrontmatterError::Yaml(m),
            ("not-a-mapping", None) => FrontmatterError::NotAMapping,
            ("missing-name", None) => FrontmatterError::MissingName,
            ("missing-description", None) => FrontmatterError::MissingDescription,
            _ => return None,
        })
    }
}

/// What a memo line holds: a parse or a refusal.
#[derive(Deserialize)]
#[serde(untagged)]
enum Stored {
    Parsed(Entry),
    Refused(Refusal),
}

/// One remembered parse, as stored: every field of [`Frontmatter`], and
/// the strict parser's error when the lenient reading was used.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    #[serde(rename = "n")]
    name: String,
    #[serde(rename = "d")]
    description: String,
    #[serde(rename = "l", default)]
    license: Option<String>,
    #[serde(rename = "c", default)]
    compatibility: Option<String>,
    #[serde(rename = "m", default)]
    metadata: BTreeMap<String, String>,
    #[serde(rename = "a", default)]
    allowed_tools: Option<String>,
    #[serde(rename = "v", default)]
    version: Option<String>,
    #[serde(rename = "t", default)]
    tags: Vec<String>,
    #[serde(rename = "x", default)]
    extra: BTreeMap<String, Value>,
    #[serde(rename = "s", default)]
    strict: Option<String>,
}

/// An [`Entry`] to write, borrowing the parse (the same fields and names).
#[derive(Serialize)]
struct EntryRef<'a> {
    #[serde(rename = "n")]
    name: &'a str,
    #[serde(rename = "d")]
    description: &'a str,
    #[serde(rename = "l", skip_serializing_if = "Option::is_none")]
    license: Option<&'a str>,
    #[serde(rename = "c", skip_serializing_if = "Option::is_none")]
    compatibility: Option<&'a str>,
    #[serde(rename = "m", skip_serializing_if = "BTreeMap::is_empty")]
    metadata: &'a BTreeMap<String, String>,
    #[serde(rename = "a", skip_serializing_if = "Option::is_none")]
    allowed_tools: Option<&'a str>,
    #[serde(rename = "v", skip_serializing_if = "Option::is_none")]
    version: Option<&'a str>,
    #[serde(rename = "t", skip_serializing_if = "<[String]>::is_empty")]
    tags: &'a [String],
    #[serde(rename = "x", skip_serializing_if = "BTreeMap::is_empty")]
    extra: &'a BTreeMap<String, Value>,
    #[serde(rename = "s", skip_serializing_if = "Option::is_none")]
    strict: Option<&'a str>,
}

impl<'a> EntryRef<'a> {
    fn new(fm: &'a Frontmatter, strict: Option<&'a String>) -> Self {
        // Destructured field by field, so a field added to `Frontmatter`
        // cannot be forgotten here.
        let Frontmatter {
            name,
            description,
            license,
            compatibility,
            metadata,
            allowed_tools,
            version,
            tags,
            extra,
        } = fm;
        Self {
            name,
            description,
            license: license.as_deref(),
            compatibility: compatibility.as_deref(),
            metadata,
            allowed_tools: allowed_tools.as_deref(),
            version: version.as_deref(),
            tags,
            extra,
            strict: strict.map(String::as_str),
        }
    }
}

impl Entry {
    fn into_parsed(self) -> (Frontmatter, Option<String>) {
        let fm = Frontmatter {
            name: self.name,
            description: self.description,
            license: self.license,
            compatibility: self.compatibility,
            metadata: self.metadata,
            allowed_tools: self.allowed_tools,
            version: self.version,
            tags: self.tags,
            extra: self.extra,
        };
        (fm, self.strict)
    }
}

/// The memo of one home: what its file held when read, and what the
/// builds since then parsed and used.
#[derive(Debug)]
pub(crate) struct Memo {
    /// The file's bytes as read (or as last written).
    bytes: Vec<u8>,
    /// Where each entry's JSON sits in `bytes`.
    index: Index,
    /// The entries of `bytes` used since the file was read.
    used: HashSet<Key>,
    /// New entries, as whole lines, in the order they were parsed.
    fresh: Vec<(Key, Vec<u8>)>,
    /// The bytes `fresh` holds.
    fresh_bytes: usize,
    /// The largest file written.
    max_bytes: usize,
}

impl Memo {
    /// The memo `bytes` (a file's content, `None` for no file), to be
    /// written back no larger than `max_bytes`.
    pub(crate) fn new(bytes: Option<Vec<u8>>, max_bytes: usize) -> Self {
        let bytes = bytes.unwrap_or_default();
        let index = index(&bytes);
        Self {
            bytes,
            index,
            used: HashSet::new(),
            fresh: Vec::new(),
            fresh_bytes: 0,
            max_bytes,
        }
    }

    /// The remembered parse (or refusal) of `key`, if the file holds a
    /// usable one.
    pub(crate) fn get(&mut self, key: Key) -> Option<Parsed> {
        let range = self.index.get(&key)?.clone();
        let stored = self
            .bytes
            .get(range)
            .and_then(|json| serde_json::from_slice::<Stored>(json).ok())
            .and_then(|stored| match stored {
                Stored::Parsed(entry) => Some(Ok(entry.into_parsed())),
                Stored::Refused(refusal) => refusal.into_error().map(Err),
            });
        match stored {
            Some(parsed) => {
                self.used.insert(key);
                Some(parsed)
            }
            None => {
                // A damaged entry is forgotten, so it is not written back.
                self.index.remove(&key);
                None
            }
        }
    }

    /// Remembers a parse (or refusal) made now, for the next
    /// [`take_update`](Self::take_update).
    pub(crate) fn add(&mut self, key: Key, parsed: &Parsed) {
        if self.index.contains_key(&key) || self.fresh_bytes >= self.max_bytes {
            return;
        }
        let mut line = format!("{:032x}{:02x} ", key.0, key.1).into_bytes();
        let written = match parsed {
            Ok((fm, strict)) => {
                serde_json::to_writer(&mut line, &EntryRef::new(fm, strict.as_ref()))
            }
            Err(e) => serde_json::to_writer(&mut line, &Refusal::new(e)),
        };
        if written.is_err() {
            return;
        }
        line.push(b'\n');
        self.fresh_bytes += line.len();
        self.fresh.push((key, line));
    }

    /// The file's new content when there are new entries and it differs
    /// from what the file holds (`None`: nothing to write): the header,
    /// the entries of the old file used since it was read, the new
    /// entries, then the other old ones, as many as fit. The memo then
    /// stands for that content.
    pub(crate) fn take_update(&mut self) -> Option<&[u8]> {
        if self.fresh.is_empty() {
            return None;
        }
        let mut out = header().into_bytes();
        let mut index = Index::default();
        let max = self.max_bytes;
        let mut append = |out: &mut Vec<u8>, key: Key, line: &[u8]| {
            if out.len() + line.len() <= max && !index.contains_key(&key) {
                let start = out.len();
                out.extend_from_slice(line);
                // The JSON: after the key and its space, before the `\n`.
                index.insert(key, start + KEY_LEN + 1..out.len() - 1);
            }
        };
        // Old entries in file order: the used ones, then the rest.
        let mut old: Vec<(Key, Range<usize>)> =
            self.index.iter().map(|(k, r)| (*k, r.clone())).collect();
        old.sort_by_key(|(key, range)| (!self.used.contains(key), range.start));
        let split = old.partition_point(|(key, _)| self.used.contains(key));
        // The whole line: the key and its space before the JSON, the line
        // break after it.
        let line_of = |json: &Range<usize>| {
            self.bytes
                .get(json.start.saturating_sub(KEY_LEN + 1)..json.end + 1)
        };
        for (key, json) in &old[..split] {
            if let Some(line) = line_of(json) {
                append(&mut out, *key, line);
            }
        }
        for (key, line) in &self.fresh {
            append(&mut out, *key, line);
        }
        for (key, json) in &old[split..] {
            if let Some(line) = line_of(json) {
                append(&mut out, *key, line);
            }
        }
        self.used.clear();
        self.fresh.clear();
        self.fresh_bytes = 0;
        if out == self.bytes {
            // Full of what this build used: the new entries found no room,
            // and the file already says all the rest.
            return None;
        }
        self.bytes = out;
        self.index = index;
        Some(&self.bytes)
    }
}

/// Where each entry's JSON sits in a memo's bytes.
type Index = HashMap<Key, Range<usize>, xxhash_rust::xxh3::Xxh3DefaultBuilder>;

/// The length of an entry line's key: 32 hex digits of the hash and 2 of
/// the reading's code.
const KEY_LEN: usize = 34;

/// Where each well-formed entry of `bytes` keeps its JSON; empty when the
/// header is not this build's.
fn index(bytes: &[u8]) -> Index {
    let mut index = Index::default();
    let header = header();
    let Some(body) = bytes.strip_prefix(header.as_bytes()) else {
        return index;
    };
    let mut pos = header.len();
    // Only lines ended by a line break: a last line without one was cut.
    for line in body.split_inclusive(|&b| b == b'\n') {
        let start = pos;
        pos += line.len();
        let Some(line) = line.strip_suffix(b"\n") else {
            break;
        };
        let Some(key) = line.get(..KEY_LEN).and_then(parse_key) else {
            continue;
        };
        if line.get(KEY_LEN) != Some(&b' ') {
            continue;
        }
        index.insert(key, start + KEY_LEN + 1..start + line.len());
    }
    index
}

/// An entry line's key: 32 lowercase hex digits of the hash, then 2 of
/// the reading's code (`00`: strict, `01`: lenient, more for the other
/// readings).
fn parse_key(text: &[u8]) -> Option<Key> {
    let (hex, reading) = text.split_at_checked(32)?;
    let hash = hex_value(hex)?;
    let [_, _] = reading else {
        return None;
    };
    let code = u8::try_from(hex_value(reading)?).ok()?;
    super::frontmatter::Reading::from_code(code)?;
    Some((hash, code))
}

/// The value of lowercase hex digits (at most 32 of them).
fn hex_value(hex: &[u8]) -> Option<u128> {
    let mut value: u128 = 0;
    for &b in hex {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            _ => return None,
        };
        value = (value << 4) | u128::from(digit);
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_reading_keeps_its_key_through_the_file() {
        let mut readings = 0;
        for code in 0..=u8::MAX {
            let Some(reading) = super::super::frontmatter::Reading::from_code(code) else {
                continue;
            };
            readings += 1;
            assert_eq!(reading.code(), code);
            let line = format!("{:032x}{code:02x}", 0xabcu128);
            assert_eq!(super::parse_key(line.as_bytes()), Some((0xabc, code)));
        }
        // Every combination of fallback (5), scalars (2), fences (3),
        // duplicate keys (2), body (2) and tabs (2) has its own code.
        assert_eq!(readings, 5 * 2 * 3 * 2 * 2 * 2);
        // A key of another width is no key.
        assert_eq!(
            super::parse_key(format!("{:032x}1", 0xabcu128).as_bytes()),
            None
        );
    }

    use super::*;
    use crate::skills::lenient;

    fn parsed(text: &str) -> (Frontmatter, Option<String>) {
        lenient::parse_or_lenient_fields(text, super::super::frontmatter::Reading::lenient(true))
            .unwrap()
    }

    #[test]
    fn an_entry_comes_back_as_it_went_in() {
        let texts = [
            "---\nname: a\ndescription: one\n---\n",
            "---\nname: b\ndescription: two\nlicense: MIT\nversion: 1.10\ntags: [x, 2]\nmetadata: {k: v}\nallowed-tools: [Read, Bash]\nother: {deep: [1, 2.5, true, null, -0.0, 1e300]}\n---\n",
            "---\nname: c\ndescription: a: b\n---\n",
        ];
        let mut memo = Memo::new(None, 1 << 20);
        for (i, text) in texts.iter().enumerate() {
            memo.add((i as u128, 1), &Ok(parsed(text)));
        }
        let written = memo.take_update().unwrap().to_vec();
        let mut read = Memo::new(Some(written), 1 << 20);
        for (i, text) in texts.iter().enumerate() {
            assert_eq!(read.get((i as u128, 1)), Some(Ok(parsed(text))), "{text}");
            assert_eq!(read.get((i as u128, 0)), None);
        }
        assert_eq!(read.take_update(), None, "nothing new, nothing written");
    }

    #[test]
    fn damage_costs_only_the_damaged_entries() {
        let one = parsed("---\nname: a\ndescription: one\n---\n");
        let fm = one.0.clone();
        let mut memo = Memo::new(None, 1 << 20);
        memo.add((1, 0), &Ok(one.clone()));
        memo.add((2, 0), &Ok(one));
        let mut bytes = memo.take_update().unwrap().to_vec();
        // Break the first entry's JSON, and cut the file inside the second.
        let first = bytes.iter().position(|&b| b == b'{').unwrap();
        bytes[first] = b'[';
        let mut cut = Memo::new(Some(bytes[..bytes.len() - 3].to_vec()), 1 << 20);
        assert_eq!(cut.get((1, 0)), None);
        assert_eq!(cut.get((2, 0)), None);
        let mut whole = Memo::new(Some(bytes.clone()), 1 << 20);
        assert_eq!(whole.get((1, 0)), None);
        assert_eq!(
            whole.get((2, 0)).and_then(Result::ok).map(|p| p.0),
            Some(fm.clone())
        );
        // Another version's memo is no memo.
        let other =
            String::from_utf8(bytes)
                .unwrap()
                .replacen(env!("CARGO_PKG_VERSION"), "0.0.0-other", 1);
        assert_eq!(
            Memo::new(Some(other.into_bytes()), 1 << 20).get((2, 0)),
            None
        );
    }

    #[test]
    fn the_file_stays_within_its_size_and_keeps_what_was_used() {
        let one = Ok(parsed("---\nname: a\ndescription: one\n---\n"));
        let mut memo = Memo::new(None, 1 << 20);
        for i in 0..10 {
            memo.add((i, 0), &one);
        }
        let bytes = memo.take_update().unwrap().to_vec();
        let line = (bytes.len() - header().len()) / 10;
        // Room for the header and three entries.
        let max = header().len() + 3 * line;
        let mut memo = Memo::new(Some(bytes), max);
        assert!(memo.get((7, 0)).is_some());
        memo.add((100, 0), &one);
        let bytes = memo.take_update().unwrap().to_vec();
        assert!(bytes.len() <= max);
        let mut memo = Memo::new(Some(bytes.clone()), max);
        assert!(memo.get((7, 0)).is_some(), "the one used");
        assert!(memo.get((100, 0)).is_some(), "the new entry");
        assert!(memo.get((0, 0)).is_some(), "the first of the rest");
        assert!(memo.get((1, 0)).is_none(), "no room left");
        // Every entry used and no room for a new one: nothing changes, so
        // nothing is written.
        memo.add((200, 0), &one);
        assert_eq!(memo.take_update(), None);
        let mut again = Memo::new(Some(bytes), max);
        assert!(again.get((200, 0)).is_none());
    }

    #[test]
    fn refusals_are_remembered() {
        let refusals = [
            FrontmatterError::NoOpeningFence,
            FrontmatterError::NoClosingFence,
            FrontmatterError::Yaml("line 2: bad".into()),
            FrontmatterError::NotAMapping,
            FrontmatterError::MissingName,
            FrontmatterError::MissingDescription,
        ];
        let mut memo = Memo::new(None, 1 << 20);
        for (i, e) in refusals.iter().enumerate() {
            memo.add((i as u128, 0), &Err(e.clone()));
        }
        let long = FrontmatterError::Yaml("é".repeat(MAX_MESSAGE_BYTES));
        memo.add((99, 0), &Err(long));
        let bytes = memo.take_update().unwrap().to_vec();
        let mut read = Memo::new(Some(bytes), 1 << 20);
        for (i, e) in refusals.iter().enumerate() {
            assert_eq!(read.get((i as u128, 0)), Some(Err(e.clone())));
        }
        match read.get((99, 0)) {
            Some(Err(FrontmatterError::Yaml(m))) => assert!(m.len() <= MAX_MESSAGE_BYTES),
            other => panic!("{other:?}"),
        }
    }

    mod property {
        use super::*;
        use proptest::prelude::*;

        /// Values of every shape the parser tells apart, spelled the ways
        /// YAML allows.
        fn value() -> impl Strategy<Value = String> {
            let scalar = prop_oneof![
                Just("1.10".to_string()),
                Just("007".to_string()),
                Just("0x1F".to_string()),
                Just("-0.0".to_string()),
                Just("1e300".to_string()),
                Just("0.1234567890123456789".to_string()),
                Just("18446744073709551616".to_string()),
                Just(".nan".to_string()),
                Just("true".to_string()),
                Just("yes".to_string()),
                Just("null".to_string()),
                Just("~".to_string()),
                Just(String::new()),
                Just("\"quoted: \\u00e9\"".to_string()),
                Just("'single ''q'''".to_string()),
                Just("a: b".to_string()),
                Just("!!str 12".to_string()),
                "[a-zA-Z0-9 ._-]{0,12}",
            ];
            let scalar = scalar.boxed();
            prop_oneof![
                3 => scalar.clone(),
                1 => prop::collection::vec(scalar.clone(), 0..4)
                    .prop_map(|items| format!("[{}]", items.join(", "))),
                1 => prop::collection::vec(("[a-z]{1,4}", scalar), 0..3).prop_map(|pairs| {
                    let pairs: Vec<String> =
                        pairs.into_iter().map(|(k, v)| format!("{k}: {v}")).collect();
                    format!("{{{}}}", pairs.join(", "))
                }),
            ]
        }

        fn frontmatter() -> impl Strategy<Value = String> {
            let key = prop_oneof![
                Just("name"),
                Just("description"),
                Just("license"),
                Just("compatibility"),
                Just("version"),
                Just("tags"),
                Just("metadata"),
                Just("allowed-tools"),
                Just("other"),
                Just("x"),
            ];
            (
                "[a-z][a-z0-9-]{0,10}",
                "[A-Za-z ,.:]{1,40}",
                prop::collection::vec((key, value()), 0..6),
            )
                .prop_map(|(name, description, rest)| {
                    let mut text = format!("---\nname: {name}\ndescription: {description}\n");
                    for (k, v) in rest {
                        text.push_str(&format!("{k}: {v}\n"));
                    }
                    text + "---\nbody\n"
                })
        }

        proptest! {
            /// Whatever a frontmatter parses to, the memo gives back the
            /// same after a trip through the file, a refusal included.
            #[test]
            fn the_memo_answers_what_parsing_answers(
                texts in prop::collection::vec(frontmatter(), 1..8),
                lenient in any::<bool>(),
            ) {
                let mut memo = Memo::new(None, 1 << 20);
                let fresh: Vec<_> = texts
                    .iter()
                    .map(|t| lenient::parse_or_lenient_fields(t, crate::skills::frontmatter::Reading::lenient(lenient)))
                    .collect();
                for (i, parsed) in fresh.iter().enumerate() {
                    memo.add((i as u128, u8::from(lenient)), parsed);
                }
                let bytes = memo.take_update().map(<[u8]>::to_vec).unwrap_or_default();
                let mut read = Memo::new(Some(bytes), 1 << 20);
                for (i, parsed) in fresh.into_iter().enumerate() {
                    prop_assert_eq!(read.get((i as u128, u8::from(lenient))), Some(parsed));
                }
            }
        }
    }
}
