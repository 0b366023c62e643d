//! The policy schema: every section, every field, and its documentation.
//!
//! Each section is declared once through [`section!`], which produces two
//! types:
//!
//! * the *layer* type (`FooLayer`), what one policy file may say: every field
//!   optional and remembering its byte span, unknown keys rejected;
//! * the *resolved* type (`Foo`), what the engine evaluates once every layer has
//!   been applied: every field present.
//!
//! Tables merge key by key across layers; a value that is an array (including
//! the array of skill sources) replaces the lower layer's array whole.

use std::ops::Range;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::template::Template;

/// A list of strings, each remembering its span in the policy file that set it.
pub type Names = Vec<Spanned<String>>;

/// Declares a policy section: its resolved type, its layer type, and the code
/// that lays one layer over the accumulated one.
macro_rules! section {
    (
        $(#[$smeta:meta])*
        $name:ident / $layer:ident as $key:literal {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $ty:ty => $fkey:literal,
            )*
        }
    ) => {
        $(#[$smeta])*
        #[derive(Debug, Clone, Serialize)]
        #[serde(rename_all = "kebab-case")]
        pub struct $name {
            $(
                $(#[$fmeta])*
                pub $field: $ty,
            )*
        }

        #[doc = concat!("One policy file's `[", $key, "]` table: every key optional.")]
        #[derive(Debug, Default, Clone, Deserialize)]
        #[serde(rename_all = "kebab-case", deny_unknown_fields)]
        pub struct $layer {
            $(
                $(#[$fmeta])*
                #[serde(default)]
                pub $field: Option<Spanned<$ty>>,
            )*
        }

        impl $layer {
            /// The dotted keys of this section, in declaration order.
            pub const KEYS: &'static [&'static str] = &[$(concat!($key, ".", $fkey)),*];

            /// Lays `upper` over `self`: every key `upper` names replaces ours.
            /// Returns the dotted keys that `upper` set.
            pub fn overlay(&mut self, upper: $layer) -> Vec<&'static str> {
                let mut set = Vec::new();
                $(
                    if upper.$field.is_some() {
                        self.$field = upper.$field;
                        set.push(concat!($key, ".", $fkey));
                    }
                )*
                set
            }

            /// The dotted key and byte span of every value this layer holds.
            /// Each span is relative to the text of the file that set the value.
            pub fn spans(&self) -> Vec<(&'static str, Range<usize>)> {
                let mut spans = Vec::new();
                $(
                    if let Some(v) = &self.$field {
                        spans.push((concat!($key, ".", $fkey), v.span()));
                    }
                )*
                spans
            }

            /// The resolved section, or the dotted keys no layer provided.
            pub fn resolve(self) -> Result<$name, Vec<&'static str>> {
                let mut missing = Vec::new();
                $(
                    let $field = match self.$field {
                        Some(v) => Some(v.into_inner()),
                        None => {
                            missing.push(concat!($key, ".", $fkey));
                            None
                        }
                    };
                )*
                match ($($field,)*) {
                    ($(Some($field),)*) => Ok($name { $($field,)* }),
                    #[allow(unreachable_patterns)]
                    _ => Err(missing),
                }
            }
        }
    };
}

section! {
    /// `[roots]`: where the home root is and how the repository root is found.
    Roots / RootsLayer as "roots" {
        /// Candidates for the home root, tried in order; the first whose
        /// variables are all set (and non-empty) wins. `$NAME` expands an
        /// environment variable, a leading `~` the user's home directory.
        /// `--home DIR` overrides the whole list.
        home: Names => "home",
        /// Names whose presence marks a directory as the repository root. The
        /// nearest ancestor of the cwd (the cwd included) holding one wins; a cwd
        /// with none above it is its own root.
        repo_markers: Names => "repo-markers",
        /// What a marker must be: `any` (file or directory, as git's worktree
        /// pointer files are files), `file`, or `dir`.
        repo_marker_kind: MarkerKind => "repo-marker-kind",
    }
}

section! {
    /// `[instructions]`: the chain of instruction files.
    Instructions / InstructionsLayer as "instructions" {
        /// File names read in the home root, in order.
        home_files: Names => "home-files",
        /// File names read at each directory level from the repository root
        /// down to the cwd, in their order within a level.
        level_files: Names => "level-files",
        /// Glob patterns over repository-relative directory paths (`""` is the
        /// root itself) whose level is not read, e.g. `"**/node_modules/**"`.
        exclude_levels: Names => "exclude-levels",
        /// Fold a file whose trimmed text equals a block already kept.
        dedup_by_content: bool => "dedup-by-content",
        /// Skip files whose text is only whitespace.
        skip_blank: bool => "skip-blank",
        /// Total budget for the text of all blocks, in UTF-8 bytes, home included.
        budget_bytes: i64 => "budget-bytes",
        /// The most bytes read from any one instruction file.
        max_file_bytes: i64 => "max-file-bytes",
        /// In which order the budget is granted: `outermost-first` or
        /// `nearest-first`. Blocks are rendered outermost-first either way.
        budget_order: BudgetOrder => "budget-order",
    }
}

section! {
    /// `[skills]`: where skills are found and how they are listed.
    Skills / SkillsLayer as "skills" {
        /// Places to look for skill folders; the lowest rank claims a name.
        sources: Vec<SkillSource> => "sources",
        /// Regular expression a skill name (folder and frontmatter) must match.
        name_rule: String => "name-rule",
        /// The longest skill name, in characters.
        name_max_chars: i64 => "name-max-chars",
        /// The longest description accepted, in characters.
        description_max_chars: i64 => "description-max-chars",
        /// The largest `SKILL.md` considered, in bytes.
        max_skill_file_bytes: i64 => "max-skill-file-bytes",
        /// Project skill descriptions are cut to this many characters in the prompt.
        project_description_chars: i64 => "project-description-chars",
        /// At most this many project skills are listed (in name order).
        max_project_skills: i64 => "max-project-skills",
        /// At most this many entries of one source folder are examined.
        max_entries_per_source: i64 => "max-entries-per-source",
        /// A file that makes a *home* skill executable (never a project one).
        /// Empty: no skill is executable.
        executable_file: String => "executable-file",
    }
}

section! {
    /// `[trust]`: what the loader is willing to follow and show.
    Trust / TrustLayer as "trust" {
        /// `within-root`: follow a symlink only while it stays inside its root;
        /// `never`: refuse every symlink.
        symlinks: SymlinkRule => "symlinks",
        /// What happens to invisible or direction-changing Unicode and HTML
        /// comments in file text and skill descriptions: `reveal`, `strip`, `keep`.
        hidden_text: HiddenText => "hidden-text",
    }
}

section! {
    /// `[templates]`: every piece of text the loader adds to the prompt.
    ///
    /// Placeholders are written `{name}`; `{{` and `}}` stand for literal braces.
    /// Each template accepts only the placeholders listed in its documentation.
    Templates / TemplatesLayer as "templates" {
        /// The section heading. Placeholders: none.
        heading: Template => "heading",
        /// Text under the heading, before the first file. Placeholders: `{nonce}`.
        preamble: Template => "preamble",
        /// The line opening a home file's block. Placeholders: `{path}`,
        /// `{origin}`, `{nonce}` (required).
        home_header: Template => "home-header",
        /// The line opening a project file's block. Placeholders: `{path}`,
        /// `{origin}`, `{nonce}` (required).
        project_header: Template => "project-header",
        /// The line closing every block. Placeholders: `{path}`, `{nonce}` (required).
        footer: Template => "footer",
        /// Put at the start of a file line that looks like a header or footer,
        /// so the line cannot pass for one. Placeholders: none.
        forged_line_prefix: Template => "forged-line-prefix",
        /// Added after a block that was cut. Placeholders: `{path}`, `{bytes}`
        /// (the file's size on disk), `{total}` (the bytes of its text as it
        /// would enter the prompt), `{included}` (the bytes shown).
        truncation_note: Template => "truncation-note",
        /// Put where hidden text was revealed. Placeholders: `{codepoint}`.
        hidden_marker: Template => "hidden-marker",
        /// The heading of the skills list. Placeholders: `{count}`.
        skills_heading: Template => "skills-heading",
        /// One skill in the list. Placeholders: `{name}`, `{description}`,
        /// `{label}`, `{origin}`.
        skill_entry: Template => "skill-entry",
        /// The `{label}` of a project skill (home skills get an empty label).
        /// Placeholders: none.
        project_skill_label: Template => "project-skill-label",
        /// The line that stands for the project skills not listed.
        /// Placeholders: `{count}`.
        more_skills: Template => "more-skills",
    }
}

/// How a repository marker must look on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MarkerKind {
    /// A file or a directory.
    Any,
    /// Only a regular file.
    File,
    /// Only a directory.
    Dir,
}

/// The order in which the instruction budget is granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BudgetOrder {
    /// Home first, then the repository root down to the cwd (Lisa today).
    OutermostFirst,
    /// The cwd first, then up to the root, home last: the most specific file
    /// survives a tight budget.
    NearestFirst,
}

/// Which symlinks are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SymlinkRule {
    /// Follow links that resolve inside their own root; refuse the others.
    WithinRoot,
    /// Refuse every link.
    Never,
}

/// Treatment of invisible and direction-changing text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HiddenText {
    /// Replace each hidden character with the policy's visible marker, so
    /// the model sees that something was hidden there. HTML comments stay as
    /// written: the model reads the raw text, so they are already visible.
    Reveal,
    /// Remove hidden characters and whole HTML comments.
    Strip,
    /// Leave the text as it is (still reported).
    Keep,
}

/// Which root a skill source lives under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RootKind {
    /// The user's home root (`~/.lisa`).
    Home,
    /// The repository root.
    Repo,
}

/// One place skills are found.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct SkillSource {
    /// The root the path is relative to.
    pub root: RootKind,
    /// The folder holding one sub-folder per skill, relative to the root.
    pub path: Spanned<String>,
    /// Lower ranks claim a name first.
    pub rank: Spanned<i64>,
}

/// One policy file, as written: every section and key optional.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct PolicyLayer {
    /// The schema version; must be `1`. Required in every policy file.
    pub version: Spanned<i64>,
    /// `[roots]`.
    #[serde(default)]
    pub roots: RootsLayer,
    /// `[instructions]`.
    #[serde(default)]
    pub instructions: InstructionsLayer,
    /// `[skills]`.
    #[serde(default)]
    pub skills: SkillsLayer,
    /// `[trust]`.
    #[serde(default)]
    pub trust: TrustLayer,
    /// `[templates]`.
    #[serde(default)]
    pub templates: TemplatesLayer,
}
