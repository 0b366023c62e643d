//! The command line: its arguments, as clap parses them, and `--policy`'s
//! value (a file, or a shipped policy's name).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use lisa_context::Loader;

use super::{complete, report, serve};

/// The examples `--help` ends with.
const EXAMPLES: &str = "\
Examples:
  lisa-context snapshot                      the section for the current directory
  lisa-context snapshot --format json        the same, with every decision recorded
  lisa-context explain                       every file considered, and why
  lisa-context --policy codex snapshot       as Codex would load it
  lisa-context skill list                    the skills, shadowed and refused ones too
  lisa-context skill show release            one skill's SKILL.md
  lisa-context policy show                   the effective policy, each value's layer
  lisa-context trust diff                    what changed since you approved it
  lisa-context serve                         JSON lines on stdin and stdout";

/// `serve --help`, beyond the one line: the ops from the protocol's own
/// list of them ([`lisa_context::protocol::Request::OPS`]), wrapped.
fn serve_about() -> String {
    let text = format!(
        "Serve JSON-lines requests on stdin, one answer per line on stdout, until stdin \
         ends. A request is an object with an `id` (echoed back exactly) and an `op`: \
         {}. Each op but hello takes `cwd` (absolute) and may take `root`. An answer holds \
         the `id` and the result under the op's name, or `error` with a stable `code`, \
         a `message` and, where useful, `help`, `available` (skill-not-found) or \
         `problems` (policy-invalid). Requests about one cwd are answered in order. \
         The policy files are watched: an edit is used from the next request, and an \
         invalid policy makes requests fail with policy-invalid until it is fixed. \
         The full protocol and its JSON Schemas: docs/protocol.md, schema/.",
        lisa_context::protocol::Request::OPS.join(", ")
    );
    wrap(&text, 79)
}

/// `text` on lines of at most `width` characters, broken at spaces.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(&line);
    out
}

/// `mcp --help`, beyond the one line.
const MCP_ABOUT: &str = "\
Serve the session's skills and project context to an MCP host (Claude Code,
Claude Desktop, VS Code, Cursor...) over stdin/stdout: newline-delimited
JSON-RPC 2.0, the Model Context Protocol's stdio transport. Each skill that
wins its name for the cwd under the policy (home and project; never a
shadowed, refused, impostor or, under pinned trust, unapproved one) is served
through the Skills extension (io.modelcontextprotocol/skills): skills/list,
skills/get and resources/directory/read, every file of its folder as a
skill://<origin>/<name>/<path> resource with its SHA-256 digest and size. The
project context is the prompt `project-context` and the resource
lisa-context://project-context. The session's cwd is --cwd, else the first
root the client offers, else the current directory. See docs/mcp.md.";

/// The example `serve --help` ends with.
const SERVE_EXAMPLE: &str = "\
Example:
  $ printf '%s\\n' '{\"id\":1,\"op\":\"fingerprint\",\"cwd\":\"/work/app\"}' | lisa-context serve
  {\"id\":1,\"fingerprint\":\"5ec99db424995aabdb28e28947064fd8\"}";

/// Builds the project-context section of an AI agent's system prompt
/// (instruction files and skills) under a declared TOML policy, reading only
/// inside the home and repository roots.
///
/// Exit codes: 0 success; 1 failure (invalid policy, unusable cwd or root,
/// skill not found or invalid name), or `survey --deny` findings; 2
/// command-line usage error, or a `survey` that could not be made (a
/// malformed baseline included).
#[derive(Parser, Debug)]
#[command(name = "lisa-context", version, about, long_about, after_long_help = EXAMPLES)]
pub(super) struct Cli {
    /// The home root (default: the first of the policy's `roots.home` candidates
    /// that is set: $LISA_HOME, else ~/.lisa; an empty variable counts as unset).
    #[arg(long, global = true, value_name = "DIR")]
    pub(super) home: Option<PathBuf>,
    // A policy file, or a shipped policy's name: see `policy_help`.
    #[arg(
        long,
        global = true,
        value_name = "FILE|NAME",
        env = "LISA_CONTEXT_POLICY",
        help = policy_help(),
        value_parser = PolicyArg,
        hide_possible_values = true,
        add = clap_complete::engine::ArgValueCompleter::new(complete::policy)
    )]
    pub(super) policy: Option<PathBuf>,
    /// Do not read the home's context-policy.toml (to run once past a
    /// broken one).
    #[arg(long, global = true)]
    pub(super) no_home_policy: bool,
    /// When to colour diagnostics.
    #[arg(long, global = true, value_enum, default_value_t = report::Color::Auto)]
    pub(super) color: report::Color,
    /// Say on stderr what the loader decided: the policy layers, the roots,
    /// and every candidate with what happened to it.
    #[arg(short, long, global = true)]
    pub(super) verbose: bool,
    /// Print only what was asked for: no warnings or notes on stderr
    /// (a deprecated policy key, why `access` loaded nothing), and no `ok:`
    /// line from `policy check` (its exit status says it). Errors are
    /// still printed.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub(super) quiet: bool,
    #[command(subcommand)]
    pub(super) command: Command,
}

#[derive(Subcommand, Debug)]
pub(super) enum Command {
    /// Print the project-context section for a cwd (text as it goes into the prompt, or JSON).
    Snapshot {
        #[command(flatten)]
        place: Place,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// A table of every candidate considered, what happened to it, and why
    /// (paths relative to the root their origin names).
    Explain {
        #[command(flatten)]
        place: Place,
        /// Output format (json: `schema/cli.schema.json`, `Explanation`).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Print the fingerprint alone (it changes whenever the snapshot would).
    Fingerprint {
        #[command(flatten)]
        place: Place,
    },
    /// What touching PATH adds to a session in the cwd: the instruction
    /// files of the folders between the repository root and PATH that the
    /// cwd's chain does not hold (under a policy with
    /// `instructions.on-access`, such as `--policy gemini`).
    Access {
        /// The path the agent touches (relative to the cwd, or absolute).
        path: PathBuf,
        #[command(flatten)]
        place: Place,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Inspect the policy.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// Inspect skills.
    Skill {
        #[command(subcommand)]
        command: SkillCommand,
    },
    /// Read rules (`[rules]`) by name.
    Rule {
        #[command(subcommand)]
        command: RuleCommand,
    },
    /// Review and approve project content (for `trust.project = "pinned"`).
    Trust {
        #[command(subcommand)]
        command: TrustCommand,
    },
    /// Every shipped policy (each harness) side by side over the
    /// repository (every folder some harness reads from; --scope cwd for
    /// the cwd alone): what each would load, and the problems a
    /// repository's author wants to know (a budget that cuts a file, hidden
    /// text, refused skills, links out of the repository, failed imports,
    /// misread rules...), with a CI gate (--deny, --allow, --baseline; exit
    /// 0 pass, 1 findings fail the gate, 2 usage or tool error). Each
    /// policy as shipped, without the user's home unless --with-home, so
    /// one commit gives one answer everywhere.
    Survey {
        #[command(flatten)]
        place: Place,
        /// The policies to survey, comma-separated (default: every shipped
        /// one).
        #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
        policies: Vec<String>,
        /// Lay the home's context-policy.toml over each surveyed policy
        /// (the home is then included, as with --with-home).
        #[arg(long)]
        with_home_policy: bool,
        /// Output format (json: `schema/cli.schema.json`, `Survey`; sarif:
        /// a SARIF 2.1.0 log for code scanning, one rule per kind of
        /// problem, paths relative to the repository root; github: GitHub
        /// Actions workflow commands, one annotation per problem).
        #[arg(long, value_enum, default_value_t = SurveyFormat::Text)]
        format: SurveyFormat,
        /// What to survey: `repo`, every folder of the repository some
        /// policy reads from as a cwd (the cwd first); `cwd`, the cwd
        /// alone.
        #[arg(long, value_enum, default_value_t = SurveyScope::Repo)]
        scope: SurveyScope,
        /// Include the user's home (its instruction files and skills). By
        /// default the survey is made without a home, so that one commit
        /// gives one answer on every machine; `--home DIR` includes DIR.
        #[arg(long)]
        with_home: bool,
        /// With `--scope repo`, the most folders surveyed besides the cwd;
        /// past it the survey reports `survey-incomplete`.
        #[arg(long, value_name = "N", default_value_t = lisa_context::MAX_SURVEY_FOLDERS)]
        max_folders: usize,
        /// Fail (exit 1) on problems of this kind, or on every problem of
        /// level warning with `warnings` (notes such as `read-by-some`
        /// fail only when named). Repeatable.
        #[arg(long, value_name = "KIND|warnings", value_parser = deny_values())]
        deny: Vec<String>,
        /// Never fail on problems of this kind, even when --deny names
        /// their level. Repeatable.
        #[arg(long, value_name = "KIND", value_parser = kind_values())]
        allow: Vec<String>,
        /// A baseline file (written by --write-baseline): problems it
        /// lists, by fingerprint, do not fail the gate. A file that is not
        /// a baseline is a usage error (exit 2).
        #[arg(long, value_name = "FILE")]
        baseline: Option<PathBuf>,
        /// Write every problem found to FILE as a baseline (JSON with a
        /// version), then gate as if given --baseline FILE.
        #[arg(long, value_name = "FILE")]
        write_baseline: Option<PathBuf>,
    },
    /// Print the version (`lisa-context 0.1.0`, as --version does); with
    /// --verbose, also the policy and protocol versions it understands and
    /// the shipped policies.
    Version,
    /// Print a shell completion script for SHELL to stdout.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) to stdout.
    Man,
    /// Serve the session's skills and project context to an MCP host over
    /// stdin/stdout (the Skills extension; see docs/mcp.md).
    #[command(long_about = MCP_ABOUT)]
    Mcp {
        /// The session's working directory (default: the client's first
        /// root, else the current directory).
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// The repository root, when the caller knows it (must contain the
        /// cwd).
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
        /// Also give the project context as the server's `instructions`
        /// (hosts often add them to the system prompt).
        #[arg(long)]
        instructions: bool,
    },
    /// Serve JSON-lines requests on stdin/stdout (see docs/protocol.md).
    #[command(long_about = serve_about(), after_long_help = SERVE_EXAMPLE)]
    Serve {
        /// Worker threads answering requests (default: the number of
        /// available cores). Requests about one cwd keep their order; with
        /// 1, every response comes in request order. At most 256.
        #[arg(long, value_name = "N",
              value_parser = clap::value_parser!(u16).range(1..=serve::MAX_JOBS as i64))]
        jobs: Option<u16>,
        /// Also serve the homes below DIR that requests name (a request's
        /// `home` field): each a real directory below DIR that this user
        /// owns, with its own policy, nonce key, trust store and memo.
        /// Checked at every request: a home replaced (by a link, another
        /// directory) or handed to another user since is admitted afresh,
        /// or refused. Without it, a request naming a home is refused
        /// (`home-refused`).
        #[arg(long, value_name = "DIR")]
        homes_under: Option<PathBuf>,
        /// The most homes named by requests the server keeps a loader for
        /// (each holds its policy, nonce key and trust store, a few KiB;
        /// the least recently used goes, and is loaded again when named).
        /// Default 1024.
        #[arg(long, value_name = "N",
              value_parser = clap::value_parser!(u32).range(1..=serve::MAX_HOMES as i64))]
        homes_max: Option<u32>,
        /// The most bytes of snapshots the server's cache keeps, every
        /// home's together (texts held once, paths, traces as the loader
        /// weighs them; least recently used go first). Default 268435456
        /// (256 MiB).
        #[arg(long, value_name = "N",
              value_parser = clap::value_parser!(u64).range(
                  Loader::MIN_CACHE_BYTES as u64..=Loader::MAX_CACHE_BYTES as u64))]
        cache_bytes: Option<u64>,
        /// The most snapshots (a cwd and root pair of one home) the
        /// server's cache keeps, every home's together. Default 16384.
        #[arg(long, value_name = "N",
              value_parser = clap::value_parser!(u64).range(1..=Loader::MAX_CACHE_ENTRIES as u64))]
        cache_entries: Option<u64>,
        /// The most directories the server keeps open, every home's
        /// together: each home root and repository root in use is one (the
        /// least recently used are closed and opened again when needed).
        /// A server of many homes wants homes + repositories, under the
        /// open-file limit (`ulimit -n`). Default 128.
        #[arg(long, value_name = "N",
              value_parser = clap::value_parser!(u64).range(1..=Loader::MAX_HANDLE_BUDGET as u64))]
        handle_budget: Option<u64>,
    },
}

#[derive(Subcommand, Debug)]
pub(super) enum PolicyCommand {
    /// Check a policy file laid over the built-in policy (exit 0 when valid,
    /// 1 with a diagnostic when not). Without FILE, check the effective policy.
    /// A key written in a deprecated spelling is a warning on stderr.
    Check {
        /// The policy file to check (`-`: read it from stdin, checked as a
        /// --policy file).
        file: Option<PathBuf>,
    },
    /// Print the effective policy as TOML, each value annotated with its layer.
    Show,
}

#[derive(Subcommand, Debug)]
pub(super) enum SkillCommand {
    /// List the skills for the cwd: those that won their names (and whether
    /// the prompt lists them), those shadowed, those refused and why.
    List {
        #[command(flatten)]
        place: Place,
        /// Output format (json: `schema/cli.schema.json`, `SkillList`).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Print the SKILL.md of the skill that wins NAME for the cwd.
    Show {
        /// The skill's name.
        #[arg(add = clap_complete::engine::ArgValueCompleter::new(complete::skill))]
        name: String,
        #[command(flatten)]
        place: Place,
    },
}

#[derive(Subcommand, Debug)]
pub(super) enum RuleCommand {
    /// Print the body of the rule named NAME for the cwd (a `listed` rule
    /// the prompt offers, a `manual` one), read as a chain file is read:
    /// sandbox, per-file cap, approval under `pinned`, hidden text,
    /// imports.
    Show {
        /// The rule's name (the snapshot's `rules[].name`).
        #[arg(add = clap_complete::engine::ArgValueCompleter::new(complete::rule))]
        name: String,
        #[command(flatten)]
        place: Place,
        /// Output format (text: the body; json: `schema/cli.schema.json`,
        /// `RuleText`, with the nonce-framed `prompt`).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
}

#[derive(Subcommand, Debug)]
pub(super) enum TrustCommand {
    /// The cwd's project items (instruction files on its chain, skills):
    /// approved, pending (new or changed) or stale (approved, now removed).
    Status {
        #[command(flatten)]
        place: Place,
        /// Output format (json: `schema/cli.schema.json`, `TrustStatus`,
        /// as `serve`'s `trust-status` answers it).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// A diff, approved text to current text, of every pending item, with
    /// its hash and the command that approves exactly that content.
    Diff {
        #[command(flatten)]
        place: Place,
        /// Output format (json: `schema/cli.schema.json`, `TrustDiff`, as
        /// `serve`'s `trust-diff` answers it).
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Approve items as they are now: PATH takes the current content (and
    /// prints it); --expect PATH=HASH approves only the content with that
    /// hash (as `trust diff` showed it), and fails, approving nothing, if
    /// the file changed since.
    Approve {
        #[command(flatten)]
        place: Place,
        /// Approve every pending item as it is now (and print each).
        #[arg(long, conflicts_with_all = ["paths", "expect"])]
        all: bool,
        /// PATH=HASH: approve PATH only if its content still has HASH (the
        /// 32 hex digits `trust diff` shows).
        #[arg(long, value_name = "PATH=HASH")]
        expect: Vec<String>,
        /// Items to approve (relative to the cwd; a skill by its SKILL.md
        /// or its folder).
        #[arg(required_unless_present_any = ["all", "expect"])]
        paths: Vec<PathBuf>,
    },
    /// Drop approvals: of the items named, or of the whole repository.
    Revoke {
        #[command(flatten)]
        place: Place,
        /// Every approval of the cwd's repository.
        #[arg(long, conflicts_with = "paths")]
        repo: bool,
        /// Items whose approval to drop (relative to the cwd).
        paths: Vec<PathBuf>,
    },
}

/// Where to build the snapshot.
#[derive(Args, Debug, Clone)]
pub(super) struct Place {
    /// The session's working directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub(super) cwd: Option<PathBuf>,
    /// The repository root, when the caller knows it (must contain the cwd).
    #[arg(long, value_name = "DIR")]
    pub(super) root: Option<PathBuf>,
}

/// The problem kinds a survey reports, as `--allow` takes them.
fn kind_values() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        lisa_context::protocol::SURVEY_PROBLEM_KINDS
            .iter()
            .map(|k| clap::builder::PossibleValue::new(k.kind)),
    )
}

/// `--deny`'s values: `warnings`, or a problem kind.
fn deny_values() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        std::iter::once(clap::builder::PossibleValue::new("warnings")).chain(
            lisa_context::protocol::SURVEY_PROBLEM_KINDS
                .iter()
                .map(|k| clap::builder::PossibleValue::new(k.kind)),
        ),
    )
}

/// `survey --scope`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SurveyScope {
    /// Every folder of the repository some policy reads from.
    Repo,
    /// The cwd alone.
    Cwd,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Format {
    Text,
    Json,
}

/// `survey`'s output formats: those of every table, and SARIF.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(super) enum SurveyFormat {
    Text,
    Json,
    Sarif,
    Github,
}

/// `--policy`'s help: the shipped names, from the one list of them.
fn policy_help() -> String {
    format!(
        "A policy file laid over the built-in policy and the home policy; or the name of a \
         shipped policy ({}) that replaces the built-in one. A bare word is a name: write \
         ./NAME for a file. Default: $LISA_CONTEXT_POLICY, read the same way by every front \
         end (serve, the Node package).",
        lisa_context::policy::SHIPPED_NAMES.join(", ")
    )
}

/// `--policy`'s value: any path (a bare word names a shipped policy, see
/// [`shipped_name`]); the shipped names are its possible values, which
/// completion scripts offer.
#[derive(Clone, Copy)]
struct PolicyArg;

impl clap::builder::TypedValueParser for PolicyArg {
    type Value = PathBuf;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<PathBuf, clap::Error> {
        let paths = clap::builder::PathBufValueParser::new();
        clap::builder::TypedValueParser::parse_ref(&paths, cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            lisa_context::policy::SHIPPED_NAMES
                .iter()
                .map(|name| clap::builder::PossibleValue::new(*name)),
        ))
    }
}

/// `--policy` names a shipped policy when it is a bare word (letters,
/// digits, `-`, `_`): no separator, no extension.
pub(super) fn shipped_name(arg: &std::path::Path) -> Option<&str> {
    let word = arg.to_str()?;
    let bare = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    bare.then_some(word)
}
