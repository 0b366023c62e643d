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
//!
//! The same declarations give the schema walk (`structure.rs`) what it checks
//! a file against before deserializing it: each section's `FIELDS` (key and
//! [`Shape`] of every field, the shape taken from the field's Rust type
//! through [`Shaped`]), and each setting enum's `WORDS`, declared through
//! [`words!`] next to its variants.

use std::ops::Range;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::rule::{self, Rule};
use super::template::Template;

/// The largest instruction budget accepted (1 MiB): a prompt section larger
/// than this is a mistake, not a policy.
pub const MAX_BUDGET_BYTES: i64 = 1 << 20;

/// The largest per-file cap accepted, for instruction files and `SKILL.md`.
pub const MAX_FILE_BYTES: i64 = 16 << 20;

/// The largest `instructions.project-prompt-bytes` accepted (16 MiB).
pub const MAX_PROJECT_PROMPT_BYTES: i64 = 16 << 20;

/// The largest `skills.frontmatter-memo-max-bytes` accepted (64 MiB).
pub const MAX_MEMO_BYTES: i64 = 64 << 20;

/// A list of strings, each remembering its span in the policy file that set it.
pub type Names = Vec<Spanned<String>>;

/// What the value of one policy key must be. The schema walk checks a file's
/// values against these before deserializing it, so that every mistake in a
/// file is found in one pass.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Shape {
    /// A TOML integer that fits an `i64`.
    Integer,
    /// `true` or `false`.
    Boolean,
    /// Any string.
    String,
    /// A string that parses as a [`Template`].
    Template,
    /// An array of strings.
    Strings,
    /// A string that is one of these words.
    Word(&'static [&'static str]),
    /// A table with these keys.
    Table(&'static [Field]),
    /// An array of tables, each with these keys.
    Tables(&'static [Field]),
}

/// One key of a table in the schema.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field {
    /// The key as written in a policy file.
    pub(crate) key: &'static str,
    /// What its value must be.
    pub(crate) shape: Shape,
    /// Whether a table without it is refused.
    pub(crate) required: bool,
    /// Whether it belongs to its section's compat part: written under
    /// `compat` in its table (`[instructions.compat]`), read with a
    /// deprecation warning at its table's top level for one release.
    pub(crate) compat: bool,
}

/// `true` for a [`section!`] field marked `compat`, `false` for any other;
/// the marker can be no other word.
macro_rules! compat_flag {
    () => {
        false
    };
    (compat) => {
        true
    };
}

/// The [`Shape`] a Rust type is read from, so that the schema walk follows the
/// types the schema is declared with rather than a second list of them.
pub(crate) trait Shaped: Sized {
    /// The shape of a value of this type in a policy file.
    const SHAPE: Shape;

    /// A value of this type as the validator reads it, beside its key's
    /// [`Rule`]. Booleans and words have nothing to check beyond their shape.
    fn value(_: &Spanned<Self>) -> Value<'_> {
        Value::Other
    }
}

impl Shaped for i64 {
    const SHAPE: Shape = Shape::Integer;
    fn value(v: &Spanned<Self>) -> Value<'_> {
        Value::Integer(v)
    }
}

impl Shaped for bool {
    const SHAPE: Shape = Shape::Boolean;
}

impl Shaped for String {
    const SHAPE: Shape = Shape::String;
    fn value(v: &Spanned<Self>) -> Value<'_> {
        Value::Text(v)
    }
}

impl Shaped for Template {
    const SHAPE: Shape = Shape::Template;
    fn value(v: &Spanned<Self>) -> Value<'_> {
        Value::Template(v)
    }
}

impl Shaped for Names {
    const SHAPE: Shape = Shape::Strings;
    fn value(v: &Spanned<Self>) -> Value<'_> {
        Value::Names(v)
    }
}

impl<T: Shaped> Shaped for Spanned<T> {
    const SHAPE: Shape = T::SHAPE;
}

impl Shaped for Vec<SkillSource> {
    const SHAPE: Shape = Shape::Tables(SkillSource::FIELDS);
    fn value(v: &Spanned<Self>) -> Value<'_> {
        Value::SkillSources(v)
    }
}

impl Shaped for Vec<NamedRoot> {
    const SHAPE: Shape = Shape::Tables(NamedRoot::FIELDS);
    fn value(v: &Spanned<Self>) -> Value<'_> {
        Value::NamedRoots(v)
    }
}

/// One key's value, as one policy file sets it, for the validator to hold
/// to the key's [`Rule`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Value<'a> {
    /// An integer.
    Integer(&'a Spanned<i64>),
    /// A string.
    Text(&'a Spanned<String>),
    /// A template.
    Template(&'a Spanned<Template>),
    /// A list of strings.
    Names(&'a Spanned<Names>),
    /// `[[skills.sources]]`.
    SkillSources(&'a Spanned<Vec<SkillSource>>),
    /// `[[roots.named]]`.
    NamedRoots(&'a Spanned<Vec<NamedRoot>>),
    /// A boolean or a word: its shape is all there is to check.
    Other,
}

/// The rule constructors' bounds, for the schema's own value types.
impl rule::List for Names {}
impl rule::Sources for Vec<SkillSource> {}
impl rule::Roots for Vec<NamedRoot> {}

/// The [`Rule`] written after `where` in a [`section!`] field, for a field
/// of type `$ty`; a field with no `where` gets [`Rule::Shape`], which only a
/// boolean or a word may have.
macro_rules! rule {
    ($ty:ty;) => {
        rule::shape::<$ty>()
    };
    ($ty:ty; template(allowed: [$($a:ident),*], marks_lines)) => {
        rule::template::<$ty>(&[$(stringify!($a)),*], &[], true)
    };
    ($ty:ty; template(allowed: [$($a:ident),*] $(, required: [$($r:ident),*])?)) => {
        rule::template::<$ty>(&[$(stringify!($a)),*], &[$($(stringify!($r)),*)?], false)
    };
    ($ty:ty; file_name(example: $ex:literal)) => {
        rule::file_name::<$ty>(
            false,
            Some(concat!("use a single path component, such as \"", $ex, "\"")),
        )
    };
    ($ty:ty; file_name(example: $ex:literal, or_empty: $what:literal)) => {
        rule::file_name::<$ty>(
            true,
            Some(concat!(
                "use a single path component, such as \"", $ex, "\", or \"\" for ", $what
            )),
        )
    };
    ($ty:ty; file_name(or_empty)) => {
        rule::file_name::<$ty>(true, None)
    };
    ($ty:ty; range($lo:expr, $hi:expr)) => {
        rule::range::<$ty>($lo, $hi)
    };
    ($ty:ty; $name:ident()) => {
        rule::$name::<$ty>()
    };
}

/// Declares a setting enum whose variants are written as words in a policy
/// file. Each variant is declared with its word, which becomes its serde name
/// and its entry in `WORDS`: a variant cannot exist without its word.
macro_rules! words {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident => $word:literal,
            )*
        }
    ) => {
        $(#[$meta])*
        #[non_exhaustive]
        pub enum $name {
            $(
                $(#[$vmeta])*
                #[serde(rename = $word)]
                $variant,
            )*
        }

        impl $name {
            /// The words a policy file may write for this setting, in
            /// declaration order.
            pub const WORDS: &'static [&'static str] = &[$($word),*];

            /// Every value, in the order of [`WORDS`](Self::WORDS).
            pub const ALL: &'static [Self] = &[$(Self::$variant),*];

            /// The word a policy file writes for this value.
            pub fn word(self) -> &'static str {
                match self {
                    $(Self::$variant => $word,)*
                }
            }
        }

        impl Shaped for $name {
            const SHAPE: Shape = Shape::Word(Self::WORDS);
        }

        impl rule::ShapeOnly for $name {}
    };
}

/// Declares a policy section: its resolved type, its layer type, the
/// constant holding its dotted keys, and the code that lays one layer over
/// the accumulated one.
///
/// Each field is declared with its key and, after `where`, the [`Rule`] its
/// value must follow (see [`rule!`] for the forms): `budget_bytes: i64 =>
/// "budget-bytes" where range(1, MAX_BUDGET_BYTES)`. A field without `where`
/// may only be a boolean or a word; any other type must state its rule, or
/// the declaration does not compile.
macro_rules! section {
    (
        $(#[$smeta:meta])*
        $name:ident / $layer:ident as $key:literal, keys $consts:ident : $keys:ident {
            $(
                $(#[$fmeta:meta])*
                $field:ident : $ty:ty => $($compat:ident)? $fkey:literal $(where $rule:ident $args:tt)?,
            )*
        }
    ) => {
        $(#[$smeta])*
        #[derive(Debug, Clone, Serialize)]
        #[serde(rename_all = "kebab-case")]
        #[non_exhaustive]
        pub struct $name {
            $(
                $(#[$fmeta])*
                #[serde(rename = $fkey)]
                pub $field: $ty,
            )*
        }

        #[doc = concat!("The dotted keys of `[", $key, "]`, one field per key (see [`", stringify!($consts), "`]).")]
        #[derive(Debug, Clone, Copy)]
        #[non_exhaustive]
        pub struct $keys {
            $(
                #[doc = concat!("`", $key, ".", $(stringify!($compat), ".",)? $fkey, "`")]
                pub $field: &'static str,
            )*
        }

        #[doc = concat!("The dotted keys of `[", $key, "]`, by field. Code names a key through these, so that a misspelt key does not compile.")]
        pub const $consts: $keys = $keys {
            $($field: concat!($key, ".", $(stringify!($compat), ".",)? $fkey),)*
        };

        #[doc = concat!("One policy file's `[", $key, "]` table: every key optional.")]
        #[derive(Debug, Default, Clone, Deserialize)]
        #[serde(rename_all = "kebab-case", deny_unknown_fields)]
        pub(crate) struct $layer {
            $(
                $(#[$fmeta])*
                #[serde(default, rename = $fkey)]
                pub(crate) $field: Option<Spanned<$ty>>,
            )*
        }

        impl $layer {
            /// The dotted keys of this section, in declaration order.
            pub(crate) const KEYS: &'static [&'static str] = &[$($consts.$field),*];

            /// The table's name in a policy file.
            pub(crate) const NAME: &'static str = $key;

            /// Every key of the table and the shape of its value, for the
            /// schema walk. No key is required: a layer sets only what it changes.
            pub(crate) const FIELDS: &'static [Field] = &[$(
                Field {
                    key: $fkey,
                    shape: <$ty as Shaped>::SHAPE,
                    required: false,
                    compat: compat_flag!($($compat)?),
                }
            ),*];

            /// Every dotted key of the table with the rule declared for its
            /// value, in declaration order.
            pub(crate) const RULES: &'static [(&'static str, Rule)] = &[$(
                ($consts.$field, rule!($ty; $($rule $args)?))
            ),*];

            /// Every value this layer sets, with its dotted key and its
            /// rule, for the validator.
            pub(crate) fn constrained(&self) -> Vec<(&'static str, Rule, Value<'_>)> {
                let mut out = Vec::new();
                // `RULES` holds one rule per field, in this order.
                let mut rules = Self::RULES.iter();
                $(
                    let rule = rules.next().map(|(_, rule)| *rule);
                    if let (Some(v), Some(rule)) = (&self.$field, rule) {
                        out.push(($consts.$field, rule, <$ty as Shaped>::value(v)));
                    }
                )*
                out
            }

            /// Lays `upper` over `self`: every key `upper` names replaces ours.
            /// Returns the dotted keys that `upper` set.
            pub(crate) fn overlay(&mut self, upper: $layer) -> Vec<&'static str> {
                let mut set = Vec::new();
                $(
                    if upper.$field.is_some() {
                        self.$field = upper.$field;
                        set.push($consts.$field);
                    }
                )*
                set
            }

            /// The dotted key and byte span of every value this layer holds.
            /// Each span is relative to the text of the file that set the value.
            pub(crate) fn spans(&self) -> Vec<(&'static str, Range<usize>)> {
                let mut spans = Vec::new();
                $(
                    if let Some(v) = &self.$field {
                        spans.push(($consts.$field, v.span()));
                    }
                )*
                spans
            }

            /// The resolved section, or the dotted keys no layer provided.
            pub(crate) fn resolve(self) -> Result<$name, Vec<&'static str>> {
                let mut missing = Vec::new();
                $(
                    let $field = match self.$field {
                        Some(v) => Some(v.into_inner()),
                        None => {
                            missing.push($consts.$field);
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
    Roots / RootsLayer as "roots", keys ROOTS: RootsKeys {
        /// Candidates for the home root, tried in order; the first whose
        /// variables are all set (and non-empty) wins. `$NAME` expands an
        /// environment variable, a leading `~` the user's home directory.
        /// `--home DIR` overrides the whole list.
        home: Names => "home" where candidates(),
        /// Candidates for the state root, where the loader keeps its own
        /// files (the nonce key, the frontmatter memo, the trust store and
        /// its lock), expanded as `home` is; `{home}` alone is the home
        /// root itself, and `{home-key}` is replaced by a digest of the
        /// home root's path (one folder per home). A folder that is not
        /// the home is created (mode 0700) on first use.
        state: Names => "state" where candidates(),
        /// Names whose presence marks a directory as the repository root. The
        /// nearest ancestor of the cwd (the cwd included) holding one wins; a cwd
        /// with none above it is its own root.
        repo_markers: Names => "repo-markers" where file_names(),
        /// What a marker must be: `any` (file or directory, as git's worktree
        /// pointer files are files), `file`, or `dir`.
        repo_marker_kind: MarkerKind => "repo-marker-kind",
        /// Directories trusted as repository roots although another user
        /// owns them (git's `safe.directory`): globs over absolute paths, or
        /// `"*"` for every directory. A marker in a directory owned by
        /// another user (root excepted) is otherwise ignored and reported.
        safe_directories: Names => "safe-directories" where absolute_globs(),
        /// Absolute directories the search for a repository marker never
        /// enters (git's `GIT_CEILING_DIRECTORIES`): the search stops below
        /// them. The cwd itself is always examined.
        ceiling_directories: Names => "ceiling-directories" where absolute_paths(),
        /// Roots beyond the home and the repository (`[[roots.named]]`):
        /// the user's own `~` for `~/.agents/skills`, `$CODEX_HOME`, an
        /// administrator's `/etc/codex`... Each is its own sandbox, trusted
        /// as the home is, named by skill sources' `root` and in snapshots.
        named: Vec<NamedRoot> => "named" where named_roots(),
    }
}

section! {
    /// `[instructions]`: the chain of instruction files.
    Instructions / InstructionsLayer as "instructions", keys INSTRUCTIONS: InstructionsKeys {
        /// File names read in the home root, in order.
        home_files: Names => "home-files" where relative_paths(),
        /// File names read at each directory level from the repository root
        /// down to the cwd, in their order within a level.
        level_files: Names => "level-files" where relative_paths(),
        /// Glob patterns over repository-relative directory paths (`""` is the
        /// root itself) whose level is not read, e.g. `"**/node_modules/**"`.
        exclude_levels: Names => "exclude-levels" where globs(),
        /// Which of the repository's levels `level-files` (and
        /// `fallback-level-files`) are read at: `every-level` (the root,
        /// then each folder down to the cwd), `root` (the repository root
        /// only: Zed, Cline) or `cwd` (the cwd only). Under `root` and
        /// `cwd`, an access loads no level files (there is no walk to
        /// extend); scoped rules still load on access.
        levels: SourceLevels => "levels",
        /// Fold a file whose trimmed text equals a block already kept.
        dedup_by_content: bool => "dedup-by-content",
        /// Skip files whose text is only whitespace (white space as `trim`
        /// defines it).
        skip_blank: bool => "skip-blank",
        /// Which characters are white space at the ends of a file's text:
        /// what a blank file is (`skip-blank`, `first-non-blank`), what is
        /// trimmed before text is compared or counted. `white-space`:
        /// Unicode's White_Space property (Rust's `str::trim`; U+0085 is
        /// white space, U+FEFF is not); `javascript`: ECMAScript's
        /// `String.prototype.trim` (U+FEFF is white space, U+0085 is not).
        trim: Trim => compat "trim",
        /// What makes a file blank (for `skip-blank` and `first-non-blank`):
        /// `white-space`, a text of white space alone (as `trim` says), or
        /// `empty`, no text at all (a byte order mark that `leading-bom`
        /// drops aside): a file of white space alone is then kept, as an
        /// empty block (OpenCode 1.18.33 shows it).
        blank: Blank => compat "blank",
        /// A UTF-8 byte order mark at the start of an instruction file:
        /// `drop` it before anything else looks at the text, or keep it as
        /// `text` (a character `trim` may or may not remove: a file holding
        /// only a BOM is then not blank under `white-space`).
        leading_bom: LeadingBom => "leading-bom",
        /// Total budget for the text of all blocks, in UTF-8 bytes, home
        /// included. 0: no project instruction file enters the prompt
        /// (home files keep the rule `budget-scope` gives them).
        budget_bytes: i64 => "budget-bytes" where range(0, MAX_BUDGET_BYTES),
        /// The most bytes read from any one instruction file.
        max_file_bytes: i64 => "max-file-bytes" where range(1, MAX_FILE_BYTES),
        /// The most characters (in `char-unit`s) of one instruction file
        /// that enter the prompt, counted over the file's decoded text (a
        /// rule's frontmatter left out) before hidden text is treated and
        /// imports are inlined: the rest is cut,
        /// with `templates.char-limit-note` (0: no such cap; Windsurf caps a
        /// rule file at 12,000 characters).
        max_file_chars: i64 => compat "max-file-chars" where range(0, MAX_FILE_BYTES),
        /// What `max-file-chars` counts: Unicode `scalar` values (Rust's
        /// `char`, Python's `str` length) or `utf-16` code units (a
        /// JavaScript string's `length`: a character beyond U+FFFF counts
        /// two).
        char_unit: CharUnit => compat "char-unit",
        /// The most characters (in `char-unit`s) the user's own files (the
        /// home root's and the named roots') put in the prompt together,
        /// counted as `max-file-chars` counts, in the order the budget is
        /// granted: the file that reaches it is cut there, and the files
        /// after it are skipped (`char-limit`). 0: no such cap (Windsurf's
        /// global rules file: 6,000).
        home_max_chars: i64 => compat "home-max-chars" where range(0, MAX_BUDGET_BYTES),
        /// The same cap for the repository's files (and those above it).
        project_max_chars: i64 => compat "project-max-chars" where range(0, MAX_BUDGET_BYTES),
        /// The most bytes of the prompt that come from the repository (and
        /// the folders above it), everything it brings counted: its blocks
        /// with their headers, footers and notes, its listed skills and
        /// rules with their labels, the headings and notes they bring. Its
        /// items are granted this in order (the blocks in `budget-order`,
        /// then the skills, then the rules); the block that crosses it is
        /// cut, and what comes after it is left out (`prompt-share`), with
        /// `templates.share-note`. A repository's share of the prompt never
        /// exceeds it, under every policy (0: the repository puts nothing
        /// in the prompt).
        project_prompt_bytes: i64 => "project-prompt-bytes" where range(0, MAX_PROJECT_PROMPT_BYTES),
        /// In which order the budget is granted: `outermost-first` or
        /// `nearest-first`. Blocks are rendered outermost-first either way.
        budget_order: BudgetOrder => "budget-order",
        /// More file names read in the home root after `home-files`: where a
        /// user's own settings add names (Gemini's `context.fileName`)
        /// without restating the shipped list. Plain names.
        extra_home_files: Names => "extra-home-files" where file_names(),
        /// More file names read at each level after `level-files` (Codex's
        /// `project_doc_fallback_filenames`, Gemini's `context.fileName`).
        /// Plain names.
        extra_level_files: Names => "extra-level-files" where file_names(),
        /// Which of the home root's names are used: `all`, `first-file` (the
        /// first that exists as a file, even a blank one) or `first-non-blank`
        /// (the first whose text is not blank).
        home_pick: Pick => "home-pick",
        /// Which of a level's names are used: `all`, `first-file` or
        /// `first-non-blank` (see `home-pick`).
        level_pick: Pick => "level-pick",
        /// The order of the project's files: `root-to-cwd` (level by level,
        /// names in policy order) or `sorted-paths` (by path, as strings).
        /// Home files always come first.
        order: ChainOrder => "order",
        /// How `sorted-paths` compares two paths: by Unicode `code-points`
        /// (the order of their UTF-8 bytes, as Rust and most tools sort) or
        /// by `utf-16` code units (JavaScript's default sort, where a
        /// character beyond U+FFFF sorts before U+E000..U+FFFF).
        path_order: PathOrder => compat "path-order",
        /// The order of the files one glob of `home-files` or `level-files`
        /// finds (a folder source such as `.clinerules/*.md`): by `path`
        /// (UTF-8 bytes), or by `name-locale`, each file's name without its
        /// extension under the Unicode collation of CLDR's root locale,
        /// which is what JavaScript's `localeCompare` gives in English
        /// (Cline's order of its rules); equal names by path.
        glob_order: GlobOrder => compat "glob-order",
        /// Fold a file reached twice (the same device and inode, through a
        /// hard link or a link inside the root) into its first block.
        fold_same_file: bool => "fold-same-file",
        /// Which files the budget counts: `all`, `project` (home files go in
        /// whole, up to `max-file-bytes`) or `none` (no budget: every file
        /// up to `max-file-bytes`).
        budget_scope: BudgetScope => "budget-scope",
        /// What the budget counts: `text` (the bytes of text that enter the
        /// prompt, trimmed) or `file` (the bytes of the file itself, as
        /// Codex counts `project_doc_max_bytes`: a byte order mark, the
        /// leading white space and each CRLF's two bytes count, and a cut
        /// falls where the file's bytes run out).
        budget_counts: BudgetCounts => compat "budget-counts",
        /// How deep `@path` imports are followed (0: imports are off and
        /// `@` is plain text). 1 inlines the files a chain file names; more
        /// follows their imports too.
        import_depth: i64 => "import-depth" where range(0, 16),
        /// What stands where an import failed: `literal` (the reference as
        /// written) or `comment` (`templates.import-failed`).
        import_failure: ImportFailure => compat "import-failure",
        /// Whether the file being read counts as open when its imports
        /// are followed: `true` makes an import of the file itself a cycle
        /// at once (Claude Code); `false` inlines it once, and the import
        /// inside that copy is the cycle (Gemini CLI).
        self_import_cycle: bool => compat "self-import-cycle",
        /// Where the home root's files (and what they import) import from:
        /// `import-root` (as `import-root` says, like every file) or
        /// `user-roots` (the home root and the named roots, each through its
        /// own handle, wherever the cwd is: Claude Code follows the user's
        /// CLAUDE.md imports wherever they lie). Never outside those roots,
        /// and never inside the repository through a named root.
        home_import_root: HomeImportRoot => compat "home-import-root",
        /// Whether `@~/path` is an import of `path` in the user's home
        /// (`$HOME`, as a leading `~` in `roots` candidates), read, or
        /// refused, as any absolute path is (Claude Code); `false`: `~`
        /// starts no import.
        tilde_imports: bool => compat "tilde-imports",
        /// Whether a file this build has read already (a chain file read
        /// before, or an earlier import) is imported again: `true` leaves
        /// the repeated import as written (`import-repeated`), as Claude
        /// Code loads each file once; `false` inlines it again.
        import_once: bool => compat "import-once",
        /// How a file names another to import: `at-path` (`@path`, relative
        /// to the importing file's folder: Gemini CLI, Claude Code) or
        /// `file-reference` (`#[[file:path]]`, relative to the importing
        /// file's root: Kiro's steering files).
        import_syntax: ImportSyntax => compat "import-syntax",
        /// Where imports must stay: `root` (the importing file's root),
        /// `marker` (the nearest folder at or above the chain file's own
        /// that holds a `roots.repo-markers` entry, else that folder:
        /// Gemini CLI's rule) or `cwd` (the working directory: a file of a
        /// root the cwd is not in imports nothing; Claude Code's rule until
        /// the user approves outside imports). Never beyond the root.
        import_root: ImportRoot => "import-root",
        /// The most files one chain file may import, at every depth.
        import_max_files: i64 => "import-max-files" where range(0, 100_000),
        /// The most bytes read for one chain file's imports, at every depth.
        import_max_bytes: i64 => "import-max-bytes" where range(0, MAX_FILE_BYTES),
        /// More folder names an import never reads inside, on top of the
        /// ones the engine always refuses (`.git`, `.hg`, `.svn`, `.jj` and
        /// every `roots.repo-markers` entry), which no policy can remove.
        /// An import whose path, or the path its links lead to, passes
        /// through one of them is refused (`vcs-metadata`). Plain names,
        /// compared without regard to ASCII case.
        import_excluded_names: Names => "import-excluded-names" where file_names(),
        /// Whether touching a path below the cwd (or elsewhere in the
        /// repository) loads the instruction files of the folders between
        /// the root and it (`Loader::access`, `serve` op `access`). When
        /// false, an access loads nothing.
        on_access: bool => "on-access",
        /// Names read at each level below the cwd when a touched path
        /// loads it, in place of `level-files` (`[]`: the `level-files`,
        /// picked by `level-pick`). OpenCode looks for `AGENTS.md`, else
        /// `CLAUDE.md`, folder by folder on access, while its chain falls
        /// back to `CLAUDE.md` only when no `AGENTS.md` is on it.
        access_level_files: Names => "access-level-files" where relative_paths(),
        /// Which of `access-level-files` a level uses: `all`, `first-file`
        /// or `first-non-blank` (unused while `access-level-files` is
        /// empty).
        access_level_pick: Pick => compat "access-level-pick",
        /// Which touched paths load anything: those anywhere in the
        /// repository (`root`) or only those inside the cwd (`cwd`: Claude
        /// Code loads nothing for a path outside it).
        access_root: AccessRoot => "access-root",
        /// The order of the files one access loads: `outermost-first` (the
        /// folder nearest the root first, as the chain) or `nearest-first`
        /// (the touched path's own folder first: OpenCode).
        access_order: BudgetOrder => compat "access-order",
        /// The budget, in the units of `budget-counts`, for everything one
        /// session loads on access (the chain's budget is apart), for the
        /// files `budget-scope` counts.
        access_budget_bytes: i64 => "access-budget-bytes" where range(0, MAX_BUDGET_BYTES),
        /// Names read at each level, like `level-files`, but only when no
        /// `level-files` file (nor `ancestor-files` file) exists at or above
        /// the cwd (Claude Code reads `AGENTS.md` only without a
        /// `CLAUDE.md`).
        fallback_level_files: Names => "fallback-level-files" where relative_paths(),
        /// Which files keep `fallback-level-files` out: empty, any
        /// `level-files` or `ancestor-files` file at or above the cwd;
        /// else only a file of one of these names there whose text is not
        /// blank (Claude Code 2.1.332 reads `AGENTS.md` beside a blank
        /// `CLAUDE.md`, a folder named `CLAUDE.md` or `.claude/rules`). The
        /// fallback names are then read at every level and in every folder
        /// `ancestor-files` reads.
        fallback_unless: Names => compat "fallback-unless" where relative_paths(),
        /// Names read in every folder above the repository root, up to the
        /// file system's root or the nearest `roots.ceiling-directories`
        /// entry (Claude Code reads every ancestor's `CLAUDE.md`). Each
        /// folder is its own sandbox; its files are labelled `ancestor`.
        /// Empty: nothing above the root is read.
        ancestor_files: Names => compat "ancestor-files" where relative_paths(),
        /// With no repository marker at or above the cwd (the cwd is its
        /// own root), which folders above the cwd are levels too: `cwd`
        /// (none) or `to-home` (each folder up to the user's home
        /// directory, not included, or the file system's root, as Claude
        /// Code 2.1.332 reads them): each is read as an ancestor folder
        /// (its own sandbox, git's owner rule) with the level files, the
        /// fallback names and the `every-level` skill sources, rather than
        /// `ancestor-files` alone.
        unmarked_levels: UnmarkedLevels => compat "unmarked-levels",
        /// Whether a file whose frontmatter has `paths:` globs is a scoped
        /// rule: not loaded with the chain, listed in `scopedRules`, loaded
        /// on access to a matching path.
        scoped_rules: bool => compat "scoped-rules",
        /// A file larger than this many bytes is skipped (`too-large`)
        /// rather than cut (0: never; Claude Code skips files over 4 MiB).
        skip_larger_than: i64 => "skip-larger-than" where range(0, 1 << 40),
    }
}

section! {
    /// `[skills]`: where skills are found and how they are listed.
    Skills / SkillsLayer as "skills", keys SKILLS: SkillsKeys {
        /// Places to look for skill folders; the lowest rank claims a name.
        sources: Vec<SkillSource> => "sources" where skill_sources(),
        /// Regular expression a skill name (folder and frontmatter) must match.
        name_rule: String => "name-rule" where regex(),
        /// The longest skill name, in characters.
        name_max_chars: i64 => "name-max-chars" where range(1, 255),
        /// The longest description accepted, in characters.
        description_max_chars: i64 => "description-max-chars" where range(1, 65_536),
        /// The largest `SKILL.md` considered, in bytes.
        max_skill_file_bytes: i64 => "max-skill-file-bytes" where range(64, MAX_FILE_BYTES),
        /// Project skill descriptions are cut to this many characters in the prompt.
        project_description_chars: i64 => "project-description-chars" where range(1, 65_536),
        /// At most this many project skills are listed (in name order).
        max_project_skills: i64 => "max-project-skills" where range(0, 100_000),
        /// At most this many entries of one source folder are examined.
        max_entries_per_source: i64 => "max-entries-per-source" where range(1, 1_000_000),
        /// How a `SKILL.md` frontmatter that is not strict YAML is read:
        /// `strict` refuses it (`bad-frontmatter`); `lenient` reads it again
        /// as plain `key: value` lines (see `docs/frontmatter.md`) and reports it in
        /// `warnings`.
        frontmatter: FrontmatterMode => "frontmatter",
        /// A UTF-8 byte order mark before a `SKILL.md`'s opening `---`:
        /// `drop` it, or keep it as `text`, so that the first line is not a
        /// fence and the skill is refused (`bad-frontmatter`), as Codex and
        /// Gemini CLI refuse it.
        leading_bom: LeadingBom => "leading-bom",
        /// Which lines open and close the frontmatter: `trailing-blanks`
        /// (`---`, blanks after it allowed), `trimmed` (`---` with white
        /// space on either side) or `exact-open` (the opening line exactly
        /// `---`, closed by the first line that starts with `---`).
        fences: Fences => "fences",
        /// What `name` and `description` may be: YAML `strings` only, or
        /// any scalar `as-written` (a number or boolean taken as spelled).
        scalars: Scalars => compat "scalars",
        /// A `SKILL.md` that is itself a symlink: `within-root` follows it
        /// as `trust.symlinks` says; `never` refuses it (`symlink-refused`)
        /// even when it stays inside its root, as Codex does. A linked skill
        /// *folder* is governed by `trust.symlinks` alone.
        skill_file_symlinks: SymlinkRule => compat "skill-file-symlinks",
        /// A file that makes a *home* skill executable (never a project one).
        /// Empty: no skill is executable.
        executable_file: String => "executable-file" where file_name(or_empty),
        /// Where a skill's name comes from: `folder-and-frontmatter` (both,
        /// and they must agree), `frontmatter`, `frontmatter-else-folder`,
        /// or `folder`. Whichever it is must follow `name-rule` and
        /// `name-max-chars`.
        name_from: NameFrom => "name-from",
        /// What happens when several sources hold a skill of one name:
        /// `lowest-rank` (the lowest rank claims it, the others are
        /// shadowed) or `list-all` (every copy is listed).
        conflict: Conflict => "conflict",
        /// A description longer than `description-max-chars`: `refuse`
        /// the skill (`description-too-long`) or `cut` it, ending it with
        /// `templates.description-cut-suffix`.
        long_description: LongDescription => "long-description",
        /// Whitespace in descriptions: `keep` it as the YAML gives it, or
        /// `collapse` every run of it (line breaks, tabs) to one space and
        /// trim the ends, before the length is checked.
        description_whitespace: Whitespace => compat "description-whitespace",
        /// A frontmatter key written twice: `refuse` the frontmatter (YAML
        /// requires unique keys: `bad-frontmatter`, or the fallback's
        /// reading) or take the `last` value (Claude Code).
        duplicate_keys: DuplicateKeys => compat "duplicate-keys",
        /// Characters of a skill's name that are each turned into `-`
        /// before the name is checked and listed (Gemini CLI turns
        /// `:\/<>*?"|` into `-`: `ns/tool*x` is listed as `ns-tool-x`).
        /// Empty: names are listed as written.
        name_dash_chars: String => compat "name-dash-chars" where text(),
        /// The `every-level` sources (by `path`) that read the levels
        /// between the root and the cwd only when the root's `.git` is a
        /// repository: under a `.git` folder with no `HEAD` in it (a
        /// marker, but no repository) only the cwd's level is read, as
        /// Codex reads `.codex/skills` (its `.agents/skills` every level
        /// still). Empty: every level whatever `.git` holds.
        levels_need_repository: Names => compat "levels-need-repository" where relative_paths(),
        /// Whether a description keeps the line breaks that end it (a `|`
        /// or `>` block scalar ends with one, as YAML decodes it): `false`
        /// cuts them; `true` shows the description as YAML gives it, as
        /// Gemini CLI does. Before `description-whitespace` and the length
        /// check.
        keep_final_breaks: bool => compat "keep-final-breaks",
        /// Whether each tab and line break of a description becomes one
        /// space and the whitespace at its ends is trimmed (runs of spaces
        /// kept), as Claude Code lists descriptions. After
        /// `keep-final-breaks`, before `description-whitespace` and the
        /// length check.
        breaks_to_spaces: bool => compat "breaks-to-spaces",
        /// Whether a description that is no text is made up as Claude
        /// Code makes it: a number or boolean is its JavaScript spelling
        /// (`1.10` is `1.1`, `0x1F` is `31`), and one that is missing,
        /// blank, null, a list or a map, or a frontmatter block that no
        /// reading takes as YAML, is the body's first non-blank line,
        /// trimmed, a `#` heading mark taken off, cut to 97 UTF-16 units
        /// and `...` when longer than 100 (`Skill` when the body has
        /// none). The body is read past the closing fence only as far as
        /// that line, within the skill file's size cap.
        description_from_body: bool => compat "description-from-body",
        /// What a tab opening a frontmatter line is: `yaml` (what the YAML
        /// parser makes of it) or `none` (no indentation at all, as js-yaml
        /// 3 reads it for OpenCode): a line opened by tabs is then a
        /// top-level key, even where it would continue the value above,
        /// and one that is no key, or the first key so opened, makes the
        /// frontmatter not YAML.
        tab_indent: TabIndent => compat "tab-indent",
        /// The file in the home root that keeps parsed frontmatter from one
        /// process to the next (a cache: a damaged or missing one costs a
        /// parse, nothing else). A plain file name; empty: no memo.
        frontmatter_memo_file: String => "frontmatter-memo-file" where file_name(example: "context-frontmatter.memo", or_empty: "no memo"),
        /// The largest the memo file is read or written, in bytes (0: no
        /// memo). The entries the last build used are kept first.
        frontmatter_memo_max_bytes: i64 => "frontmatter-memo-max-bytes" where range(0, MAX_MEMO_BYTES),
    }
}

section! {
    /// `[trust]`: what the loader is willing to follow and show.
    Trust / TrustLayer as "trust", keys TRUST: TrustKeys {
        /// `within-root`: follow a symlink only while it stays inside its root;
        /// `never`: refuse every symlink.
        symlinks: SymlinkRule => "symlinks",
        /// What happens to invisible or direction-changing Unicode and HTML
        /// comments in file text and skill descriptions: `reveal`, `strip`, `keep`.
        hidden_text: HiddenText => "hidden-text",
        /// A project file with more than one hard link (which may be a link
        /// to a file outside the repository): `allow` reads it, `refuse`
        /// skips it (`hard-link`). Either way it is reported in `warnings`.
        hard_links: HardLinkRule => "hard-links",
        /// The file in the home root holding the random key the nonce is
        /// derived with (created on first use, mode 0600), so that no
        /// repository can compute the nonce. A plain file name.
        nonce_key_file: String => "nonce-key-file" where file_name(example: "context-nonce.key"),
        /// Whether project instruction files and project skills need the
        /// user's approval: `open` takes them as they are on disk; `pinned`
        /// takes only those whose content the user approved (see
        /// `lisa-context trust`), and leaves the others out of the prompt.
        project: ProjectTrust => "project",
        /// The file in the home root holding the approvals (JSON, written
        /// atomically under a lock). A plain file name.
        store_file: String => "store-file" where file_name(example: "context-trust.json"),
        /// The command named in `templates.unapproved-note` as `{command}`:
        /// what the user runs to review the items left out.
        review_command: String => "review-command" where text(),
    }
}

section! {
    /// `[rules]`: which chain files are rules whose frontmatter says when
    /// they apply (Cursor's `.mdc` rules, Windsurf's `trigger`, Kiro's
    /// `inclusion`, Continue's `alwaysApply`, Copilot's `applyTo`), and how
    /// that frontmatter is read. A rule's mode is `always` (a block of the
    /// chain), `on-access` (loaded when a touched path matches its globs, as
    /// a scoped rule), `listed` (its name and description are listed in the
    /// prompt; the agent reads it when it wants it) or `manual` (loaded only
    /// when the user names it: not in the prompt). See `docs/policy.md`,
    /// "Rules and their modes", for the order in which the keys decide.
    Rules / RulesLayer as "rules", keys RULES: RulesKeys {
        /// Globs over a chain file's path relative to the folder it was
        /// found in (a level, the home root): the files that are rules. A
        /// file must be a chain file first (`instructions.level-files`,
        /// `home-files`); `[]`: no rules.
        files: Names => "files" where relative_paths(),
        /// The frontmatter key naming the mode in a word of its own
        /// (Windsurf's `trigger`, Kiro's `inclusion`); `""`: none.
        mode_key: String => "mode-key" where text(),
        /// The `mode-key` words meaning `always`.
        always_words: Names => "always-words" where words(),
        /// The `mode-key` words meaning `on-access` (the rule's globs decide
        /// which touched paths load it).
        on_access_words: Names => "on-access-words" where words(),
        /// The `mode-key` words meaning `listed`.
        listed_words: Names => "listed-words" where words(),
        /// The `mode-key` words meaning `manual`. A word in no list makes the
        /// rule `manual`, with the word in its `why` and `misread`.
        manual_words: Names => "manual-words" where words(),
        /// The frontmatter key of a boolean that makes the rule `always`
        /// when true (Cursor's and Continue's `alwaysApply`); `""`: none. A
        /// value that is not a YAML boolean (`"true"` quoted) is not taken.
        always_key: String => "always-key" where text(),
        /// The frontmatter keys holding the rule's globs, the first present
        /// taken (aliases). A value is a list of strings or one string of
        /// comma-separated globs (commas inside `{}` stay in their glob).
        globs_keys: Names => "globs-keys" where words(),
        /// A glob with no `/` in it (`*.tsx`) matches at any depth (`**/`
        /// is put before it, as gitignore reads a pattern without a
        /// slash) (after `globs-prefix`); false: such a glob matches at the
        /// repository root only. The docs of Cursor, Windsurf and Kiro are
        /// silent, and the rules their users write (`globs: "*.tsx"`)
        /// assume any depth.
        bare_globs_any_depth: bool => "bare-globs-any-depth",
        /// Put before every glob that does not already start with it (Amp's
        /// implicit `**/`); `""`: none. Globs are relative to the
        /// repository root.
        globs_prefix: String => compat "globs-prefix" where text(),
        /// The frontmatter keys holding patterns tested against a touched
        /// file's content (Continue's `regex`), the first present taken: a
        /// string (one pattern) or a list. A rule with patterns is
        /// `on-access` like one with globs; it loads when a touched path
        /// matches its globs (every path, without globs) and the start of
        /// that file matches one of its patterns. `[]`: none.
        regex_keys: Names => compat "regex-keys" where words(),
        /// The longest pattern taken, in bytes; a longer one never matches
        /// (the rule's `misread` says so).
        regex_max_bytes: i64 => compat "regex-max-bytes" where range(1, 65_536),
        /// How many bytes from the start of a touched file the patterns are
        /// tested on (0: none, so a rule with patterns never loads).
        regex_scan_bytes: i64 => compat "regex-scan-bytes" where range(0, 16 << 20),
        /// The frontmatter key of the rule's description (listed rules show
        /// it).
        description_key: String => "description-key" where text(),
        /// The frontmatter key of the rule's name (`""`, or absent in the
        /// file: its file name without the extension).
        name_key: String => "name-key" where text(),
        /// Keep one rule per name (the name compared trimmed and
        /// lower-cased, and names that look alike taken as one: one
        /// confusable skeleton, Unicode Technical Standard #39): the home's
        /// wins over the project's (Cline lets a
        /// global rule replace a workspace rule of its name), and among
        /// the rules of one side the one read last. The others are left
        /// out (`rule-replaced`), each with the winner in `replacedBy`.
        one_per_name: bool => compat "one-per-name",
        /// The mode when neither `mode-key` nor `always-key` is in the
        /// frontmatter and no globs are: `by-description` (then `described`
        /// or `undescribed` decides), `always`, `listed` or `manual`.
        absent: RuleAbsent => "absent",
        /// The mode of a rule that nothing above decided and that has a
        /// description (Cursor: `listed`, the agent asks for it).
        described: RuleMode => compat "described",
        /// The mode of a rule that nothing above decided and that has no
        /// description (Cursor: `manual`).
        undescribed: RuleMode => compat "undescribed",
    }
}

section! {
    /// `[fingerprint]`: what counts as a change of the snapshot.
    Fingerprint / FingerprintLayer as "fingerprint", keys FINGERPRINT: FingerprintKeys {
        /// Whether a file's modification time is part of the fingerprint:
        /// `false` (the content decides: a touch, or an edit undone, leaves
        /// it as it was); `true` (a touch counts as a change, as in loaders
        /// that compare `path:mtime` lists: every `touch`, checkout or
        /// editor save without a change then costs a rebuild).
        include_mtime: bool => "include-mtime",
    }
}

section! {
    /// `[survey]`: what `lisa-context survey`'s gate lets pass. Read from
    /// the user's policy (`--policy FILE`, or the home's with the home),
    /// never from a repository; no shipped policy sets it but the built-in
    /// one, as an empty list. Not part of the fingerprint: a snapshot does
    /// not depend on it.
    SurveyGate / SurveyGateLayer as "survey", keys SURVEY: SurveyKeys {
        /// Findings that do not fail the gate, each a `kind` (one of the
        /// survey's problem kinds) at the paths a `path` glob matches,
        /// relative to the repository root (`docs/**/*.md`): as `--allow
        /// KIND`, for those paths alone.
        allow: Vec<SurveyAllow> => "allow",
    }
}

/// The survey's problem kinds, as `[[survey.allow]]`'s `kind` takes them:
/// those of `protocol::SURVEY_PROBLEM_KINDS`, in its order (a test holds
/// the two lists together; the policy sits below the protocol and cannot
/// read it).
pub const SURVEY_KINDS: &[&str] = &[
    "budget-clip",
    "hidden-text",
    "rejected-skill",
    "read-by-some",
    "import-failed",
    "rule-misread",
    "rule-unmatched",
    "symlink-escape",
    "vcs-metadata",
    "not-text",
    "too-large",
    "survey-incomplete",
];

/// One `[[survey.allow]]` entry: findings of `kind` at the paths `path`
/// matches do not fail `survey`'s gate.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub struct SurveyAllow {
    /// A survey problem kind (`hidden-text`, `budget-clip`...).
    #[serde(rename = "kind")]
    pub kind: Spanned<String>,
    /// A glob over paths relative to the repository root.
    #[serde(rename = "path")]
    pub path: Spanned<String>,
}

impl SurveyAllow {
    /// The keys of one `[[survey.allow]]` entry, both required.
    pub(crate) const FIELDS: &'static [Field] = &[
        Field {
            key: "kind",
            shape: Shape::Word(SURVEY_KINDS),
            required: true,
            compat: false,
        },
        Field {
            key: "path",
            shape: <Spanned<String> as Shaped>::SHAPE,
            required: true,
            compat: false,
        },
    ];
}

impl Shaped for Vec<SurveyAllow> {
    const SHAPE: Shape = Shape::Tables(SurveyAllow::FIELDS);
}

impl rule::ShapeOnly for Vec<SurveyAllow> {}

section! {
    /// `[templates]`: every piece of text the loader adds to the prompt.
    ///
    /// Placeholders are written `{name}`; `{{` and `}}` stand for literal braces.
    /// Each template accepts only the placeholders listed in its documentation
    /// (and declared with it, `where template(allowed: [...])`: exactly the
    /// ones the code fills).
    Templates / TemplatesLayer as "templates", keys TEMPLATES: TemplatesKeys {
        /// The section heading. Placeholders: none.
        heading: Template => "heading" where template(allowed: []),
        /// Text under the heading, before the first file. Placeholders: `{nonce}`.
        preamble: Template => "preamble" where template(allowed: [nonce]),
        /// The line opening a home file's block. Placeholders: `{path}`,
        /// `{origin}`, `{nonce}` (required).
        home_header: Template => "home-header" where template(allowed: [path, origin, nonce], required: [nonce]),
        /// The line opening a project file's block. Placeholders: `{path}`,
        /// `{origin}`, `{nonce}` (required).
        project_header: Template => "project-header" where template(allowed: [path, origin, nonce], required: [nonce]),
        /// The line opening a block read above the repository root
        /// (`instructions.compat.ancestor-files`). Placeholders: `{path}`,
        /// `{origin}`, `{nonce}` (required).
        ancestor_header: Template => "ancestor-header" where template(allowed: [path, origin, nonce], required: [nonce]),
        /// The line closing every block. Placeholders: `{path}`, `{nonce}` (required).
        footer: Template => "footer" where template(allowed: [path, nonce], required: [nonce]),
        /// Put at the start of a file line that looks like a header or footer,
        /// so the line cannot pass for one. Placeholders: none.
        forged_line_prefix: Template => "forged-line-prefix" where template(allowed: [], marks_lines),
        /// Added after a block that the budget cut. Placeholders: `{path}`, `{bytes}`
        /// (the file's size on disk), `{total}` (the bytes of its text as it
        /// would enter the prompt; for a file the read stopped short of its
        /// end, its size on disk: the rest of its text was never read),
        /// `{included}` (the bytes shown).
        truncation_note: Template => "truncation-note" where template(allowed: [path, bytes, total, included]),
        /// Added after a block that `instructions.max-file-bytes` cut (the
        /// file was not read to its end). Placeholders: `{path}`, `{bytes}`
        /// (the file's size on disk), `{limit}` (the bytes read at most),
        /// `{included}` (the bytes shown).
        file_limit_note: Template => "file-limit-note" where template(allowed: [path, bytes, limit, included]),
        /// Added after a block that `instructions.compat.max-file-chars` cut.
        /// Placeholders: `{path}`, `{chars}` (the characters of the file's
        /// text, in `char-unit`s), `{limit}` (the cap), `{unit}` (the
        /// `char-unit` word).
        char_limit_note: Template => "char-limit-note" where template(allowed: [path, chars, limit, unit]),
        /// Put where hidden text was revealed. Placeholders: `{codepoint}`.
        hidden_marker: Template => "hidden-marker" where template(allowed: [codepoint]),
        /// The heading of the skills list. Placeholders: `{count}`.
        skills_heading: Template => "skills-heading" where template(allowed: [count]),
        /// One skill in the list. Placeholders: `{name}`, `{description}`,
        /// `{label}`, `{origin}`.
        skill_entry: Template => "skill-entry" where template(allowed: [name, description, label, origin]),
        /// The heading of the listed rules (`[rules]`, mode `listed`), after
        /// the skills. Placeholders: `{count}`.
        rules_heading: Template => "rules-heading" where template(allowed: [count]),
        /// One listed rule. Placeholders: `{name}`, `{description}`,
        /// `{label}` (`project-skill-label` for a project rule), `{origin}`,
        /// `{path}` (where the agent reads it).
        rule_entry: Template => "rule-entry" where template(allowed: [name, description, label, origin, path]),
        /// The `{label}` of a project skill (home skills get an empty label).
        /// Placeholders: none.
        project_skill_label: Template => "project-skill-label" where template(allowed: []),
        /// The line that stands for the project skills not listed.
        /// Placeholders: `{count}`.
        more_skills: Template => "more-skills" where template(allowed: [count]),
        /// Put at the end of a description cut to `skills.description-max-chars`
        /// (under `skills.long-description = "cut"`); counted in the limit.
        /// Placeholders: none.
        description_cut_suffix: Template => "description-cut-suffix" where template(allowed: []),
        /// Put before an imported file's text. Placeholders: `{path}` (as
        /// written after the `@`).
        import_open: Template => "import-open" where template(allowed: [path]),
        /// Put after an imported file's text. Placeholders: `{path}`.
        import_close: Template => "import-close" where template(allowed: [path]),
        /// Put in place of an import that failed, under
        /// `instructions.compat.import-failure = "comment"`. Placeholders: `{path}`,
        /// `{reason}`.
        import_failed: Template => "import-failed" where template(allowed: [path, reason]),
        /// Under `trust.project = "pinned"`, the line that says how many
        /// project items were left out awaiting the user's review.
        /// Placeholders: `{count}`, `{command}` (`trust.review-command`).
        unapproved_note: Template => "unapproved-note" where template(allowed: [count, command]),
        /// Ends the section when items of the repository were left out
        /// because its share of the prompt
        /// (`instructions.project-prompt-bytes`) was full. Placeholders:
        /// `{count}` (the items left out), `{limit}` (the share, in bytes).
        share_note: Template => "share-note" where template(allowed: [count, limit]),
    }
}

impl Templates {
    /// The boundary templates (the headers and the footer), each with its
    /// dotted key and what a reader sees of its literal start (see
    /// [`as_seen`](crate::vocab::unicode::as_seen); empty when the template
    /// opens with a placeholder). The one list both the render's guard and
    /// the policy's check of the forged-line prefix go by.
    pub(crate) fn boundaries(&self) -> [(&'static str, String); 4] {
        [
            (TEMPLATES.home_header, &self.home_header),
            (TEMPLATES.project_header, &self.project_header),
            (TEMPLATES.ancestor_header, &self.ancestor_header),
            (TEMPLATES.footer, &self.footer),
        ]
        .map(|(key, tpl)| (key, crate::vocab::unicode::as_seen(tpl.literal_prefix())))
    }
}

words! {
    /// How a repository marker must look on disk.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum MarkerKind {
        /// A file or a directory.
        Any => "any",
        /// Only a regular file.
        File => "file",
        /// Only a directory.
        Dir => "dir",
    }
}

words! {
    /// The order in which the instruction budget is granted.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum BudgetOrder {
        /// Home first, then the repository root down to the cwd (Lisa today).
        OutermostFirst => "outermost-first",
        /// The cwd first, then up to the root, home last: the most specific file
        /// survives a tight budget.
        NearestFirst => "nearest-first",
    }
}

words! {
    /// Which of the candidate names of one place (the home root, or one
    /// level) are used.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum Pick {
        /// Every name that holds a usable file.
        All => "all",
        /// The first name that exists as a file (a refused link counts:
        /// it would have been that file), even when it is blank; the rest
        /// of the place is passed over.
        FirstFile => "first-file",
        /// The first name whose text is not blank.
        FirstNonBlank => "first-non-blank",
    }
}

words! {
    /// The order of the project's instruction files.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum ChainOrder {
        /// Level by level from the repository root down to the cwd; within
        /// a level, the policy's name order.
        RootToCwd => "root-to-cwd",
        /// By path, compared as strings (Gemini CLI's order).
        SortedPaths => "sorted-paths",
        /// Level by level from the cwd up to the repository root (OpenCode's
        /// nearest-first order); within a level, the policy's name order.
        CwdToRoot => "cwd-to-root",
    }
}

words! {
    /// Which instruction files the budget counts.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum BudgetScope {
        /// Home and project files share the budget.
        All => "all",
        /// Only project files; home files go in whole (up to
        /// `max-file-bytes`).
        Project => "project",
        /// No budget: every file goes in up to `max-file-bytes`.
        None => "none",
    }
}

words! {
    /// Where a skill's name comes from.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum NameFrom {
        /// The folder's name, which the frontmatter's `name` must equal.
        FolderAndFrontmatter => "folder-and-frontmatter",
        /// The frontmatter's `name` (required); the folder's is not used.
        Frontmatter => "frontmatter",
        /// The frontmatter's `name`, else the folder's.
        FrontmatterElseFolder => "frontmatter-else-folder",
        /// The folder's name; a frontmatter `name` is not needed.
        Folder => "folder",
    }
}

words! {
    /// What happens to skills of one name found in several places.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum Conflict {
        /// The lowest rank claims the name; the others are shadowed.
        LowestRank => "lowest-rank",
        /// Every copy is listed.
        ListAll => "list-all",
    }
}

words! {
    /// What happens to a description over the limit.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum LongDescription {
        /// The skill is refused.
        Refuse => "refuse",
        /// The description is cut to the limit.
        Cut => "cut",
    }
}

words! {
    /// What the instruction budget counts.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum BudgetCounts {
        /// The bytes of text that enter the prompt.
        Text => "text",
        /// The bytes of the file on disk (surrounding whitespace included).
        File => "file",
    }
}

words! {
    /// Which characters are white space at the ends of a text.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum Trim {
        /// Unicode's White_Space property, as Rust's `str::trim` (U+0085
        /// included, U+FEFF not).
        WhiteSpace => "white-space",
        /// ECMAScript's `String.prototype.trim`: its WhiteSpace and
        /// LineTerminator sets (U+FEFF included, U+0085 not).
        JavaScript => "javascript",
    }
}

words! {
    /// What makes an instruction file blank.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum Blank {
        /// Its text is white space alone, as `trim` defines it.
        WhiteSpace => "white-space",
        /// It has no text at all (after a byte order mark `leading-bom`
        /// drops): white space alone is text.
        Empty => "empty",
    }
}

words! {
    /// What a UTF-8 byte order mark at the start of a file is.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum LeadingBom {
        /// Dropped before the text is looked at.
        Drop => "drop",
        /// A character of the text, like any other.
        Text => "text",
    }
}

words! {
    /// How an instruction file names a file to import.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum ImportSyntax {
        /// `@path` at the start of the text or after white space, relative
        /// to the importing file's folder.
        AtPath => "at-path",
        /// `#[[file:path]]`, relative to the importing file's root.
        FileReference => "file-reference",
    }
}

words! {
    /// What a cap counted in characters counts.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum CharUnit {
        /// Unicode scalar values.
        Scalar => "scalar",
        /// UTF-16 code units (JavaScript's `length`).
        Utf16 => "utf-16",
    }
}

words! {
    /// How two paths compare under `sorted-paths`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum PathOrder {
        /// By Unicode code points (the order of the UTF-8 bytes).
        CodePoints => "code-points",
        /// By UTF-16 code units (JavaScript's default string order).
        Utf16 => "utf-16",
    }
}

words! {
    /// How the files one glob finds are ordered.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum GlobOrder {
        /// By path, as UTF-8 bytes.
        Path => "path",
        /// By file name without its extension, under CLDR's root collation
        /// (JavaScript's `localeCompare` in English); equal names by path.
        NameLocale => "name-locale",
    }
}

words! {
    /// What a `SKILL.md` frontmatter key written twice gives.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
    pub enum DuplicateKeys {
        /// The frontmatter is not YAML (keys must be unique).
        Refuse => "refuse",
        /// The last value written.
        Last => "last",
    }
}

words! {
    /// What happens to the whitespace in a text.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum Whitespace {
        /// Kept as written.
        Keep => "keep",
        /// Every run becomes one space; the ends are trimmed.
        Collapse => "collapse",
    }
}

words! {
    /// What stands where an `@path` import failed.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum ImportFailure {
        /// The `@path` as written.
        Literal => "literal",
        /// `templates.import-failed`.
        Comment => "comment",
    }
}

words! {
    /// The folder `@path` imports must stay in.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum ImportRoot {
        /// The importing file's root.
        Root => "root",
        /// The nearest folder holding a repository marker.
        Marker => "marker",
        /// The working directory.
        Cwd => "cwd",
    }
}

words! {
    /// Where the home root's files import from
    /// (`instructions.compat.home-import-root`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum HomeImportRoot {
        /// As `instructions.import-root` says, like every file.
        ImportRoot => "import-root",
        /// The home root and the named roots, wherever the cwd is.
        UserRoots => "user-roots",
    }
}

words! {
    /// A rule's mode, where the policy names one (`rules.compat.described`,
    /// `rules.compat.undescribed`): on-access needs globs, so it is not a choice
    /// here.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum RuleMode {
        /// A block of the chain.
        Always => "always",
        /// Listed by name and description; read when the agent asks.
        Listed => "listed",
        /// Not in the prompt: loaded only when the user names it.
        Manual => "manual",
    }
}

words! {
    /// What a rule's frontmatter without a mode says (`rules.absent`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum RuleAbsent {
        /// `rules.compat.described` or `rules.compat.undescribed`, by whether the rule
        /// has a description.
        ByDescription => "by-description",
        /// A block of the chain (Kiro, Continue, Amp).
        Always => "always",
        /// Listed by name and description.
        Listed => "listed",
        /// Not in the prompt (Copilot's instructions without `applyTo`).
        Manual => "manual",
    }
}

words! {
    /// Which touched paths on-access loading answers.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum AccessRoot {
        /// Any path inside the repository root.
        Root => "root",
        /// Only paths inside the working directory.
        Cwd => "cwd",
    }
}

words! {
    /// Which symlinks are followed.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
    pub enum SymlinkRule {
        /// Follow links that resolve inside their own root; refuse the others.
        WithinRoot => "within-root",
        /// Refuse every link.
        Never => "never",
    }
}

words! {
    /// How frontmatter that is not strict YAML is read.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum FrontmatterMode {
        /// Only strict YAML: anything else is `bad-frontmatter`.
        Strict => "strict",
        /// Strict YAML, else the lenient `key: value` subset.
        Lenient => "lenient",
        /// Strict YAML, else (the YAML refused, or its `name` or
        /// `description` not usable) only the `name:` and `description:`
        /// lines, read as plain text (Gemini CLI's fallback).
        NameDescriptionLines => "name-description-lines",
        /// Strict YAML, else the YAML again with the value of each
        /// `key: value` line taken as literal text (quoted), block scalars,
        /// nested maps, quoted values and YAML's null still read as YAML,
        /// a ` #` comment cut (Codex's retry).
        ValuesAsText => "values-as-text",
        /// Strict YAML, else the YAML again with each top-level `key:
        /// value` line whose value holds a character YAML gives a meaning
        /// (`{}[]*&#!|>%@` and a backtick, or `: `) made a double-quoted
        /// string, and the tabs that open a line made two spaces each
        /// (Claude Code's retry).
        QuoteSpecialValues => "quote-special-values",
    }
}

words! {
    /// Which lines open and close a `SKILL.md`'s frontmatter.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
    pub enum Fences {
        /// `---` alone, trailing blanks allowed (both fences).
        TrailingBlanks => "trailing-blanks",
        /// A line that is `---` once white space around it is trimmed
        /// (both fences; Codex).
        Trimmed => "trimmed",
        /// The opening line exactly `---`; the block closes at the first
        /// line that starts with `---`, and its text ends before the line
        /// break ahead of that line (a blank last line is not read: a `|+`
        /// block keeps one blank line fewer) (Gemini CLI).
        ExactOpen => "exact-open",
    }
}

words! {
    /// What a frontmatter `name` or `description` may be in YAML.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
    pub enum Scalars {
        /// A string only: a number or a boolean counts as missing.
        Strings => "strings",
        /// Any scalar: a number or a boolean is taken as spelled in the
        /// file (`1.50` is `1.50`, `0x1F` is `0x1F`).
        AsWritten => "as-written",
    }
}

words! {
    /// What to do with a project file that has more than one hard link.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum HardLinkRule {
        /// Read it (and report it).
        Allow => "allow",
        /// Skip it with reason `hard-link` (and report it).
        Refuse => "refuse",
    }
}

words! {
    /// Whether project files and skills need the user's approval.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum ProjectTrust {
        /// Project files and skills are used as they are on disk.
        Open => "open",
        /// Only content the user approved is used.
        Pinned => "pinned",
    }
}

words! {
    /// Treatment of invisible and direction-changing text.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
    pub enum HiddenText {
        /// Replace each hidden character with the policy's visible marker, so
        /// the model sees that something was hidden there. HTML comments stay as
        /// written: the model reads the raw text, so they are already visible.
        Reveal => "reveal",
        /// Remove hidden characters and whole HTML comments.
        Strip => "strip",
        /// Leave the text as it is (still reported).
        Keep => "keep",
    }
}

/// The root words every policy knows; `[[roots.named]]` adds more.
pub(crate) const ROOT_WORDS: &[&str] = &["home", "repo"];

/// One root beyond the home and the repository.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub struct NamedRoot {
    /// The name skill sources and snapshots use (lowercase letters, digits
    /// and `-`; not `home` or `repo`).
    #[serde(rename = "name")]
    pub name: Spanned<String>,
    /// Where it is: candidates tried in order as for `roots.home` (`$NAME`,
    /// `${NAME}`, a leading `~`); the first that expands wins. A root
    /// whose candidates do not expand, or whose directory is missing,
    /// holds nothing.
    #[serde(rename = "candidates")]
    pub candidates: Names,
    /// Instruction files read in this root, before the home root's. Plain
    /// names; empty by default.
    #[serde(rename = "files", default)]
    pub files: Names,
    /// A conditional source: this root's `files` are read only when none
    /// of the files of these roots (`home`: `instructions.home-files` and
    /// `extra-home-files`; a named root listed before this one: its
    /// `files`) is there, and then in the home's place, after it
    /// (OpenCode reads `~/.claude/CLAUDE.md` only without its own global
    /// `AGENTS.md`). Empty by default: always read, before the home's.
    #[serde(rename = "unless-found", default)]
    pub unless_found: Names,
}

impl NamedRoot {
    /// The keys of one `[[roots.named]]` entry.
    pub(crate) const FIELDS: &'static [Field] = &[
        Field {
            key: "name",
            shape: <Spanned<String> as Shaped>::SHAPE,
            required: true,
            compat: false,
        },
        Field {
            key: "candidates",
            shape: <Names as Shaped>::SHAPE,
            required: true,
            compat: false,
        },
        Field {
            key: "files",
            shape: <Names as Shaped>::SHAPE,
            required: false,
            compat: false,
        },
        Field {
            key: "unless-found",
            shape: <Names as Shaped>::SHAPE,
            required: false,
            compat: false,
        },
    ];
}

words! {
    /// What a tab opening a frontmatter line is (`skills.compat.tab-indent`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub enum TabIndent {
        /// What the YAML parser makes of it.
        #[default]
        Yaml => "yaml",
        /// No indentation: the line is at the left margin (js-yaml 3).
        None => "none",
    }
}

words! {
    /// With no repository marker found, which folders above the cwd are
    /// read as levels (`instructions.compat.unmarked-levels`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub enum UnmarkedLevels {
        /// None: the cwd is the only level.
        #[default]
        Cwd => "cwd",
        /// Every folder above the cwd up to the user's home directory (not
        /// included), or the file system's root when the home is not above.
        ToHome => "to-home",
    }
}

words! {
    /// Where in the repository a skill source's path, or the level files
    /// (`instructions.levels`), are looked for.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
    pub enum SourceLevels {
        /// Relative to its root only.
        #[default]
        Root => "root",
        /// At every level from the repository root down to the cwd (a
        /// project source; Codex's `.agents/skills`).
        EveryLevel => "every-level",
        /// At the cwd only (a project source; Gemini's workspace skills).
        Cwd => "cwd",
    }
}

fn one() -> Spanned<i64> {
    Spanned::new(0..0, 1)
}

/// One place skills are found.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub struct SkillSource {
    /// The root the path is relative to: `home`, `repo`, or the name of a
    /// `[[roots.named]]` entry.
    #[serde(rename = "root")]
    pub root: Spanned<String>,
    /// The folder holding one sub-folder per skill, relative to the root.
    #[serde(rename = "path")]
    pub path: Spanned<String>,
    /// Lower ranks claim a name first.
    #[serde(rename = "rank")]
    pub rank: Spanned<i64>,
    /// For a `repo` source: where in the repository `path` is looked for
    /// (`root`, `every-level`, `cwd`). Default `root`.
    #[serde(rename = "levels", default)]
    pub levels: SourceLevels,
    /// How deep below `path` a `SKILL.md` is looked for: 1 is
    /// `path/NAME/SKILL.md` only; more walks nested folders (dot folders
    /// skipped, `skills.max-entries-per-source` folders at most). Default 1.
    #[serde(rename = "depth", default = "one")]
    pub depth: Spanned<i64>,
    /// Whether a `SKILL.md` directly in `path` is a skill too (its folder
    /// name is the last component of `path`). Default false.
    #[serde(rename = "source-skill", default)]
    pub source_skill: bool,
}

impl SkillSource {
    /// The keys of one `[[skills.sources]]` entry, all required. A unit test
    /// holds this list to the struct's serde fields.
    pub(crate) const FIELDS: &'static [Field] = &[
        Field {
            key: "root",
            shape: <Spanned<String> as Shaped>::SHAPE,
            required: true,
            compat: false,
        },
        Field {
            key: "path",
            shape: <Spanned<String> as Shaped>::SHAPE,
            required: true,
            compat: false,
        },
        Field {
            key: "rank",
            shape: <Spanned<i64> as Shaped>::SHAPE,
            required: true,
            compat: false,
        },
        Field {
            key: "levels",
            shape: <SourceLevels as Shaped>::SHAPE,
            required: false,
            compat: false,
        },
        Field {
            key: "depth",
            shape: <Spanned<i64> as Shaped>::SHAPE,
            required: false,
            compat: false,
        },
        Field {
            key: "source-skill",
            shape: <bool as Shaped>::SHAPE,
            required: false,
            compat: false,
        },
    ];
}

/// One policy file, as written: every section and key optional.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub(crate) struct PolicyLayer {
    /// The schema version; must be `1`. Required in every policy file.
    pub version: Spanned<i64>,
    /// The shipped policy this file is laid over (one of
    /// [`SHIPPED_NAMES`](super::SHIPPED_NAMES)) instead of the built-in one.
    #[serde(default)]
    pub extends: Option<Spanned<String>>,
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
    /// `[rules]`.
    #[serde(default)]
    pub rules: RulesLayer,
    /// `[fingerprint]`.
    #[serde(default)]
    pub fingerprint: FingerprintLayer,
    /// `[templates]`.
    #[serde(default)]
    pub templates: TemplatesLayer,
    /// `[survey]`.
    #[serde(default)]
    pub survey: SurveyGateLayer,
    /// The keys this file writes in a deprecated spelling, as warnings
    /// (`policy::deprecated-key`), in file order. Not a key of the file.
    #[serde(skip)]
    pub(crate) deprecations: Vec<super::Problem>,
}

impl PolicyLayer {
    /// Every value this file sets, with its dotted key and the rule declared
    /// for it, section by section.
    pub(crate) fn constrained(&self) -> Vec<(&'static str, Rule, Value<'_>)> {
        let mut out = self.roots.constrained();
        out.extend(self.instructions.constrained());
        out.extend(self.skills.constrained());
        out.extend(self.trust.constrained());
        out.extend(self.rules.constrained());
        out.extend(self.fingerprint.constrained());
        out.extend(self.templates.constrained());
        out.extend(self.survey.constrained());
        out
    }

    /// The top-level keys of a policy file. A unit test holds this list to the
    /// struct's serde fields.
    pub(crate) const FIELDS: &'static [Field] = &[
        Field {
            key: "version",
            shape: <Spanned<i64> as Shaped>::SHAPE,
            required: true,
            compat: false,
        },
        Field {
            key: "extends",
            shape: Shape::Word(super::SHIPPED_NAMES),
            required: false,
            compat: false,
        },
        Field {
            key: RootsLayer::NAME,
            shape: Shape::Table(RootsLayer::FIELDS),
            required: false,
            compat: false,
        },
        Field {
            key: InstructionsLayer::NAME,
            shape: Shape::Table(InstructionsLayer::FIELDS),
            required: false,
            compat: false,
        },
        Field {
            key: SkillsLayer::NAME,
            shape: Shape::Table(SkillsLayer::FIELDS),
            required: false,
            compat: false,
        },
        Field {
            key: TrustLayer::NAME,
            shape: Shape::Table(TrustLayer::FIELDS),
            required: false,
            compat: false,
        },
        Field {
            key: RulesLayer::NAME,
            shape: Shape::Table(RulesLayer::FIELDS),
            required: false,
            compat: false,
        },
        Field {
            key: FingerprintLayer::NAME,
            shape: Shape::Table(FingerprintLayer::FIELDS),
            required: false,
            compat: false,
        },
        Field {
            key: TemplatesLayer::NAME,
            shape: Shape::Table(TemplatesLayer::FIELDS),
            required: false,
            compat: false,
        },
        Field {
            key: SurveyGateLayer::NAME,
            shape: Shape::Table(SurveyGateLayer::FIELDS),
            required: false,
            compat: false,
        },
    ];
}

#[cfg(test)]
mod tests {
    use std::fmt;

    use serde::de::{self, Visitor};

    use super::*;

    /// The names serde was given for a struct's fields or an enum's variants.
    #[derive(Debug)]
    struct SerdeNames(Vec<&'static str>);

    impl fmt::Display for SerdeNames {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "{:?}", self.0)
        }
    }

    impl std::error::Error for SerdeNames {}

    impl de::Error for SerdeNames {
        fn custom<T: fmt::Display>(_: T) -> Self {
            SerdeNames(Vec::new())
        }
    }

    /// A deserializer that only records what a derived `Deserialize` asks it
    /// for: the field names of a struct, the variant names of an enum.
    struct Capture;

    impl<'de> de::Deserializer<'de> for Capture {
        type Error = SerdeNames;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, SerdeNames> {
            Err(SerdeNames(Vec::new()))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, SerdeNames> {
            Err(SerdeNames(fields.to_vec()))
        }

        fn deserialize_enum<V: Visitor<'de>>(
            self,
            _: &'static str,
            variants: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, SerdeNames> {
            Err(SerdeNames(variants.to_vec()))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map identifier ignored_any
        }
    }

    fn serde_names<T: Deserialize<'static>>() -> Vec<&'static str> {
        match T::deserialize(Capture) {
            Err(SerdeNames(names)) => names,
            Ok(_) => Vec::new(),
        }
    }

    fn keys(fields: &[Field]) -> Vec<&'static str> {
        fields.iter().map(|f| f.key).collect()
    }

    /// The schema walk's key lists are the ones serde deserializes: a key
    /// added to a struct but not to the walk (or the reverse) fails here.
    #[test]
    fn walk_fields_are_serde_fields() {
        assert_eq!(keys(PolicyLayer::FIELDS), serde_names::<PolicyLayer>());
        assert_eq!(keys(RootsLayer::FIELDS), serde_names::<RootsLayer>());
        assert_eq!(
            keys(InstructionsLayer::FIELDS),
            serde_names::<InstructionsLayer>()
        );
        assert_eq!(keys(SkillsLayer::FIELDS), serde_names::<SkillsLayer>());
        assert_eq!(keys(TrustLayer::FIELDS), serde_names::<TrustLayer>());
        assert_eq!(keys(RulesLayer::FIELDS), serde_names::<RulesLayer>());
        assert_eq!(
            keys(FingerprintLayer::FIELDS),
            serde_names::<FingerprintLayer>()
        );
        assert_eq!(
            keys(TemplatesLayer::FIELDS),
            serde_names::<TemplatesLayer>()
        );
        assert_eq!(keys(SkillSource::FIELDS), serde_names::<SkillSource>());
        assert_eq!(keys(NamedRoot::FIELDS), serde_names::<NamedRoot>());
        for (layer, keys) in [
            (RootsLayer::FIELDS, RootsLayer::KEYS),
            (InstructionsLayer::FIELDS, InstructionsLayer::KEYS),
            (SkillsLayer::FIELDS, SkillsLayer::KEYS),
            (TrustLayer::FIELDS, TrustLayer::KEYS),
            (RulesLayer::FIELDS, RulesLayer::KEYS),
            (FingerprintLayer::FIELDS, FingerprintLayer::KEYS),
            (TemplatesLayer::FIELDS, TemplatesLayer::KEYS),
        ] {
            assert_eq!(layer.len(), keys.len());
            for (field, dotted) in layer.iter().zip(keys) {
                assert!(dotted.ends_with(&format!(".{}", field.key)), "{dotted}");
            }
        }
    }

    /// Every key's declared rule fits the shape of its value: every
    /// integer has a range, every template its placeholders, every string
    /// and list a rule of strings. (The rule constructors already refuse a
    /// misfit at compile time; this holds the two lists to each other.)
    #[test]
    fn every_key_has_a_rule_that_fits_its_shape() {
        type Section = (
            &'static [Field],
            &'static [(&'static str, Rule)],
            &'static str,
        );
        let sections: [Section; 7] = [
            (RootsLayer::FIELDS, RootsLayer::RULES, RootsLayer::NAME),
            (
                InstructionsLayer::FIELDS,
                InstructionsLayer::RULES,
                InstructionsLayer::NAME,
            ),
            (SkillsLayer::FIELDS, SkillsLayer::RULES, SkillsLayer::NAME),
            (TrustLayer::FIELDS, TrustLayer::RULES, TrustLayer::NAME),
            (RulesLayer::FIELDS, RulesLayer::RULES, RulesLayer::NAME),
            (
                FingerprintLayer::FIELDS,
                FingerprintLayer::RULES,
                FingerprintLayer::NAME,
            ),
            (
                TemplatesLayer::FIELDS,
                TemplatesLayer::RULES,
                TemplatesLayer::NAME,
            ),
        ];
        let mut templates = 0;
        for (fields, rules, name) in sections {
            assert_eq!(fields.len(), rules.len(), "{name}");
            for (field, (key, rule)) in fields.iter().zip(rules) {
                let part = if field.compat { "compat." } else { "" };
                assert_eq!(*key, format!("{name}.{part}{}", field.key));
                let fits = match (field.shape, rule) {
                    (Shape::Integer, Rule::Range(lo, hi)) => lo <= hi,
                    (
                        Shape::Template,
                        Rule::Template {
                            allowed, required, ..
                        },
                    ) => {
                        templates += 1;
                        required.iter().all(|r| allowed.contains(r))
                    }
                    (Shape::String, Rule::Text | Rule::Regex | Rule::FileName { .. }) => true,
                    (
                        Shape::Strings,
                        Rule::FileNames
                        | Rule::RelativePaths
                        | Rule::Globs
                        | Rule::AbsolutePaths { .. }
                        | Rule::Candidates
                        | Rule::Words,
                    ) => true,
                    (Shape::Boolean | Shape::Word(_), Rule::Shape) => true,
                    (Shape::Tables(_), Rule::SkillSources | Rule::NamedRoots) => true,
                    _ => false,
                };
                assert!(fits, "{key}: {rule:?} does not fit {:?}", field.shape);
            }
        }
        assert_eq!(templates, TemplatesLayer::FIELDS.len());
        // The boundary templates all carry the nonce.
        let builtin = super::super::Policy::builtin().expect("the built-in policy loads");
        for (key, _) in builtin.templates.boundaries() {
            let (_, rule) = TemplatesLayer::RULES
                .iter()
                .find(|(k, _)| *k == key)
                .unwrap();
            assert!(
                matches!(rule, Rule::Template { required, .. } if required.contains(&"nonce")),
                "{key}"
            );
        }
    }

    fn check_words<T>()
    where
        T: Deserialize<'static> + Serialize + PartialEq + fmt::Debug + Copy + Shaped,
    {
        let Shape::Word(words) = T::SHAPE else {
            panic!("not a word enum");
        };
        // serde's variants are the words the walk accepts, in order.
        assert_eq!(serde_names::<T>(), words.to_vec());
        for word in words {
            let value: T = toml::Value::String((*word).into())
                .try_into()
                .unwrap_or_else(|e| panic!("{word}: {e}"));
            assert_eq!(
                toml::Value::try_from(value).ok(),
                Some(toml::Value::String((*word).into()))
            );
        }
    }

    /// Each enum's `WORDS` is what serde reads and writes. A variant cannot be
    /// declared without its word (the `words!` syntax requires one); should
    /// an enum leave the macro or lose a word, serde's variant list and
    /// `WORDS` differ and this fails.
    #[test]
    fn enum_words_are_serde_variants() {
        check_words::<MarkerKind>();
        check_words::<BudgetOrder>();
        check_words::<SymlinkRule>();
        check_words::<HiddenText>();
        check_words::<HardLinkRule>();
        check_words::<FrontmatterMode>();
        check_words::<Fences>();
        check_words::<Scalars>();
        check_words::<ProjectTrust>();
        check_words::<Pick>();
        check_words::<ChainOrder>();
        check_words::<BudgetScope>();
        for (all, words) in [
            (
                MarkerKind::ALL.iter().map(|v| v.word()).collect::<Vec<_>>(),
                MarkerKind::WORDS,
            ),
            (
                BudgetOrder::ALL.iter().map(|v| v.word()).collect(),
                BudgetOrder::WORDS,
            ),
            (
                SymlinkRule::ALL.iter().map(|v| v.word()).collect(),
                SymlinkRule::WORDS,
            ),
            (
                HiddenText::ALL.iter().map(|v| v.word()).collect(),
                HiddenText::WORDS,
            ),
            (
                HardLinkRule::ALL.iter().map(|v| v.word()).collect(),
                HardLinkRule::WORDS,
            ),
            (
                FrontmatterMode::ALL.iter().map(|v| v.word()).collect(),
                FrontmatterMode::WORDS,
            ),
            (
                ProjectTrust::ALL.iter().map(|v| v.word()).collect(),
                ProjectTrust::WORDS,
            ),
        ] {
            assert_eq!(all, words.to_vec());
        }
        check_words::<SourceLevels>();
        check_words::<UnmarkedLevels>();
        check_words::<TabIndent>();
        check_words::<NameFrom>();
        check_words::<BudgetCounts>();
        check_words::<Trim>();
        check_words::<Blank>();
        check_words::<LeadingBom>();
        check_words::<PathOrder>();
        check_words::<CharUnit>();
        check_words::<ImportSyntax>();
        check_words::<Whitespace>();
        check_words::<ImportFailure>();
        check_words::<ImportRoot>();
        check_words::<AccessRoot>();
        check_words::<Conflict>();
        check_words::<LongDescription>();
    }
}
