//! The rule of each key: what its value must be beyond its shape, declared
//! next to the key in the schema's `section!` (`where range(1, 255)`). The
//! constructors are bound to the Rust types they suit, so that a key
//! declared with a rule that does not fit its type, or without a rule when
//! its type needs one, fails to compile.

use super::template::Template;

/// What a key's value must be beyond its `Shape`: the constraint declared
/// next to the key in `section!` (`where range(1, 255)`), which the
/// validator checks for every key a file sets. A rule is made by one of the
/// functions of this module, each taking only the Rust type it suits: a range
/// for a string key, or an integer key without a range, does not compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// Nothing beyond the shape: a boolean, one of an enum's words.
    Shape,
    /// Any string.
    Text,
    /// An integer from the first bound to the second, both included.
    Range(i64, i64),
    /// A template.
    Template {
        /// The placeholders the code fills for it: any other is refused.
        allowed: &'static [&'static str],
        /// The placeholders it must carry.
        required: &'static [&'static str],
        /// Whether it is the prefix that marks file lines, which must not
        /// be blank.
        marks_lines: bool,
    },
    /// One path component, used as a file name under a root.
    FileName {
        /// Whether `""` is accepted (it turns the feature off).
        empty: bool,
        /// How to fix a name that is not plain.
        help: Option<&'static str>,
    },
    /// A list of plain file names (may be empty).
    FileNames,
    /// A list of paths relative to a place (a name, a path, a glob), no
    /// `..`.
    RelativePaths,
    /// A list of globs.
    Globs,
    /// A list of absolute paths; with `globs`, globs and `"*"` too.
    AbsolutePaths {
        /// Whether entries are globs.
        globs: bool,
    },
    /// A list of home-root candidates: at least one.
    Candidates,
    /// A regular expression that compiles.
    Regex,
    /// A list of words (frontmatter keys, the words of a mode): each
    /// non-empty, on one line.
    Words,
    /// `[[skills.sources]]`: ranks, depths, paths.
    SkillSources,
    /// `[[roots.named]]`: names, candidates, file names.
    NamedRoots,
}

/// An integer key: it needs a range.
pub(crate) trait Integer {}
impl Integer for i64 {}
/// A string key.
pub(crate) trait Text {}
impl Text for String {}
/// A list-of-strings key.
pub(crate) trait List {}
/// A template key.
pub(crate) trait IsTemplate {}
impl IsTemplate for Template {}
/// A key whose shape says everything: a boolean, a word.
pub(crate) trait ShapeOnly {}
impl ShapeOnly for bool {}

pub(crate) const fn shape<T: ShapeOnly>() -> Rule {
    Rule::Shape
}
pub(crate) const fn range<T: Integer>(lo: i64, hi: i64) -> Rule {
    Rule::Range(lo, hi)
}
pub(crate) const fn template<T: IsTemplate>(
    allowed: &'static [&'static str],
    required: &'static [&'static str],
    marks_lines: bool,
) -> Rule {
    Rule::Template {
        allowed,
        required,
        marks_lines,
    }
}
pub(crate) const fn text<T: Text>() -> Rule {
    Rule::Text
}
pub(crate) const fn regex<T: Text>() -> Rule {
    Rule::Regex
}
pub(crate) const fn file_name<T: Text>(empty: bool, help: Option<&'static str>) -> Rule {
    Rule::FileName { empty, help }
}
pub(crate) const fn file_names<T: List>() -> Rule {
    Rule::FileNames
}
pub(crate) const fn relative_paths<T: List>() -> Rule {
    Rule::RelativePaths
}
pub(crate) const fn globs<T: List>() -> Rule {
    Rule::Globs
}
pub(crate) const fn absolute_paths<T: List>() -> Rule {
    Rule::AbsolutePaths { globs: false }
}
pub(crate) const fn absolute_globs<T: List>() -> Rule {
    Rule::AbsolutePaths { globs: true }
}
pub(crate) const fn candidates<T: List>() -> Rule {
    Rule::Candidates
}
pub(crate) const fn words<T: List>() -> Rule {
    Rule::Words
}
/// Only for `Vec<SkillSource>`.
pub(crate) trait Sources {}
pub(crate) const fn skill_sources<T: Sources>() -> Rule {
    Rule::SkillSources
}
/// Only for `Vec<NamedRoot>`.
pub(crate) trait Roots {}
pub(crate) const fn named_roots<T: Roots>() -> Rule {
    Rule::NamedRoots
}
