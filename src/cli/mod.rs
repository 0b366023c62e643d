//! Argument parsing and the commands.

mod complete;
mod explain;
mod json;
mod man;
mod report;
mod serve;
mod trust;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use lisa_context::policy::{Layer, Policy, PolicySource};
use lisa_context::{Loader, LoaderBuilder};

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

/// `serve --help`, beyond the one line.
const SERVE_ABOUT: &str = "\
Serve JSON-lines requests on stdin, one answer per line on stdout, until stdin
ends. A request is an object with an `id` (echoed back exactly) and an `op`:
hello, snapshot, fingerprint, refresh, skill, trust-status, trust-diff, access.
Each op but hello takes `cwd` (absolute) and may take `root`. An answer holds
the `id` and the result under the op's name, or `error` with a stable `code`,
a `message` and, where useful, `help`, `available` (skill-not-found) or
`problems` (policy-invalid). Requests about one cwd are answered in order.
The policy files are watched: an edit is used from the next request, and an
invalid policy makes requests fail with policy-invalid until it is fixed.
The full protocol and its JSON Schemas: docs/protocol.md, schema/.";

/// The example `serve --help` ends with.
const SERVE_EXAMPLE: &str = "\
Example:
  $ printf '%s\\n' '{\"id\":1,\"op\":\"fingerprint\",\"cwd\":\"/work/app\"}' | lisa-context serve
  {\"id\":1,\"fingerprint\":\"5ec99db424995aabdb28e28947064fd8\"}";

/// Exit status: success.
const OK: u8 = 0;
/// Exit status: the command failed (invalid policy, unusable cwd, no such skill...).
const FAILED: u8 = 1;

/// Builds the project-context section of an AI agent's system prompt
/// (instruction files and skills) under a declared TOML policy, reading only
/// inside the home and repository roots.
///
/// Exit codes: 0 success; 1 failure (invalid policy, unusable cwd or root,
/// skill not found or invalid name); 2 command-line usage error.
#[derive(Parser, Debug)]
#[command(name = "lisa-context", version, about, long_about, after_long_help = EXAMPLES)]
struct Cli {
    /// The home root (default: the first of the policy's `roots.home` candidates
    /// that is set: $LISA_HOME, else ~/.lisa; an empty variable counts as unset).
    #[arg(long, global = true, value_name = "DIR")]
    home: Option<PathBuf>,
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
    policy: Option<PathBuf>,
    /// Do not read the home's context-policy.toml (to run once past a
    /// broken one).
    #[arg(long, global = true)]
    no_home_policy: bool,
    /// When to colour diagnostics.
    #[arg(long, global = true, value_enum, default_value_t = report::Color::Auto)]
    color: report::Color,
    /// Say on stderr what the loader decided: the policy layers, the roots,
    /// and every candidate with what happened to it.
    #[arg(short, long, global = true)]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
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
    /// Every shipped policy (each harness) side by side for one cwd: what
    /// each would load, and the problems a repository's author wants to
    /// know (a budget that cuts a file, hidden text, refused skills, a file
    /// some harnesses read and others ignore, failed imports). Each policy
    /// as shipped: the home's context-policy.toml is laid over them only
    /// with --with-home-policy.
    Survey {
        #[command(flatten)]
        place: Place,
        /// The policies to survey, comma-separated (default: every shipped
        /// one).
        #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
        policies: Vec<String>,
        /// Lay the home's context-policy.toml over each surveyed policy.
        #[arg(long)]
        with_home_policy: bool,
        /// Output format (json: `schema/cli.schema.json`, `Survey`; sarif:
        /// a SARIF 2.1.0 log for code scanning, one rule per kind of
        /// problem, paths relative to the repository root).
        #[arg(long, value_enum, default_value_t = SurveyFormat::Text)]
        format: SurveyFormat,
        /// `warnings`: exit 1 when a problem was found (for CI).
        #[arg(long, value_enum, value_name = "WHAT")]
        deny: Option<Deny>,
    },
    /// Print a shell completion script for SHELL to stdout.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) to stdout.
    Man,
    /// Serve JSON-lines requests on stdin/stdout (see docs/protocol.md).
    #[command(long_about = SERVE_ABOUT, after_long_help = SERVE_EXAMPLE)]
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
enum PolicyCommand {
    /// Check a policy file laid over the built-in policy (exit 0 when valid,
    /// 1 with a diagnostic when not). Without FILE, check the effective policy.
    Check {
        /// The policy file to check.
        file: Option<PathBuf>,
    },
    /// Print the effective policy as TOML, each value annotated with its layer.
    Show,
}

#[derive(Subcommand, Debug)]
enum SkillCommand {
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
enum RuleCommand {
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
enum TrustCommand {
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
struct Place {
    /// The session's working directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// The repository root, when the caller knows it (must contain the cwd).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

/// What `survey --deny` fails on.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Deny {
    /// Any problem found.
    Warnings,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Text,
    Json,
}

/// `survey`'s output formats: those of every table, and SARIF.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum SurveyFormat {
    Text,
    Json,
    Sarif,
}

/// Parses the arguments and runs the command.
pub fn run() -> ExitCode {
    // `COMPLETE=SHELL lisa-context ...`: a completion request, answered and
    // exited here (see `complete`).
    clap_complete::CompleteEnv::with_factory(Cli::command).complete();
    let cli = Cli::parse();
    let color = cli.color;
    let code = match dispatch(cli) {
        Ok(code) => ExitCode::from(code),
        Err(report) => {
            report::emit(report.as_ref(), color, bypass_note(&report));
            ExitCode::from(FAILED)
        }
    };
    #[cfg(feature = "internals")]
    emit_counts();
    code
}

/// In a build with the `internals` feature (the tests' build), prints the
/// work counters as one line of JSON on stderr when `LISA_CONTEXT_COUNTS`
/// is set: how the black-box tests count parses, compilations and writes.
#[cfg(feature = "internals")]
fn emit_counts() {
    if std::env::var_os("LISA_CONTEXT_COUNTS").is_none() {
        return;
    }
    let counts: serde_json::Map<String, serde_json::Value> = lisa_context::internals::counts()
        .into_iter()
        .map(|(name, n)| (name.to_string(), n.into()))
        .collect();
    let _ = writeln!(
        std::io::stderr(),
        "lisa-context counts: {}",
        serde_json::Value::Object(counts)
    );
}

/// For a broken home policy, how to run once without it.
fn bypass_note(report: &miette::Report) -> Option<&'static str> {
    let invalid = match report.downcast_ref::<lisa_context::BootstrapError>() {
        Some(lisa_context::BootstrapError::Policy(lisa_context::policy::PolicyError::Invalid(
            i,
        ))) => i,
        _ => match report.downcast_ref::<lisa_context::policy::PolicyError>() {
            Some(lisa_context::policy::PolicyError::Invalid(i)) => i,
            _ => return None,
        },
    };
    invalid
        .name
        .ends_with(lisa_context::policy::HOME_POLICY_FILE)
        .then_some("this is the home's policy; to run once without it, add --no-home-policy")
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

/// The library's bootstrap, fed from the command line: `--home` (else the
/// policy's candidates, `$LISA_HOME` first), the home policy, `--policy`.
fn builder(cli: &Cli) -> LoaderBuilder {
    layers(
        cli.home.as_deref(),
        cli.policy.as_deref(),
        cli.no_home_policy,
    )
}

/// The builder for a home (`None`: the policy's candidates), `--policy`
/// and `--no-home-policy`.
fn layers(home: Option<&Path>, policy: Option<&Path>, no_home_policy: bool) -> LoaderBuilder {
    let mut builder = Loader::builder();
    if let Some(home) = home {
        builder = builder.home(absolute(home));
    }
    match policy.and_then(shipped_name) {
        Some(name) => builder = builder.shipped_policy(name),
        None => {
            if let Some(file) = policy {
                builder = builder.policy_file(absolute(file));
            }
        }
    }
    if no_home_policy {
        builder = builder.home_policy(false);
    }
    builder
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
fn shipped_name(arg: &std::path::Path) -> Option<&str> {
    let word = arg.to_str()?;
    let bare = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    bare.then_some(word)
}

/// The effective policy: built-in, then the home layer, then `--policy`.
fn load_policy(cli: &Cli) -> miette::Result<Policy> {
    Ok(builder(cli).resolve()?.0)
}

/// A one-shot command's loader: it builds once, so it keeps no parsed
/// frontmatter in memory (the home's memo file serves the next run) and
/// one snapshot.
fn loader(cli: &Cli) -> miette::Result<Loader> {
    Ok(builder(cli).parse_cache(0).capacity(1).build()?)
}

fn cwd_of(place: &Place) -> miette::Result<PathBuf> {
    match &place.cwd {
        Some(c) => Ok(absolute(c)),
        None => std::env::current_dir()
            .map_err(|e| miette::miette!("cannot determine the current directory: {e}")),
    }
}

/// Lets a one-shot command's loader go without freeing it: the process ends
/// right after, and taking its caches apart piece by piece would cost more
/// than a tenth of a snapshot's own work. (Nothing in a loader's drop has an
/// effect outside the process; its descriptors close at exit.)
fn leave(loader: Loader) {
    std::mem::forget(loader);
}

fn dispatch(cli: Cli) -> miette::Result<u8> {
    let mut out = std::io::stdout().lock();
    match &cli.command {
        Command::Snapshot { place, format } => {
            let loader = loader(&cli)?;
            let cwd = cwd_of(place)?;
            let root = place.root.as_deref().map(absolute);
            let snap = loader.snapshot_in(&cwd, root.as_deref())?;
            narrate(&cli, &loader, &snap);
            let written = match format {
                Format::Text => write_out(&mut out, snap.prompt.as_bytes()),
                Format::Json => {
                    let json = json::pretty(&*snap)
                        .map_err(|e| miette::miette!("cannot encode the snapshot: {e}"))?;
                    write_out(&mut out, json.as_bytes())
                }
            };
            leave(loader);
            written
        }
        Command::Access {
            path,
            place,
            format,
        } => {
            let loader = loader(&cli)?;
            let cwd = cwd_of(place)?;
            let root = place.root.as_deref().map(absolute);
            let mut session = lisa_context::Session::new(cwd, root);
            let path = if path.is_absolute() {
                path.clone()
            } else {
                session.cwd().join(path)
            };
            let access = loader.access(&mut session, &path)?;
            // Nothing printed and exit 0 would read as "nothing below here":
            // say that the policy loads nothing on access at all.
            if loader.policy().is_ok_and(|p| !p.instructions.on_access) {
                // The shipped policies that do, from their own declarations.
                let loading: Vec<&str> = lisa_context::policy::SHIPPED_NAMES
                    .iter()
                    .copied()
                    .filter(|name| {
                        PolicySource::shipped(name)
                            .and_then(|s| Policy::from_sources(&[s]).ok())
                            .is_some_and(|p| p.instructions.on_access)
                    })
                    .collect();
                let _ = writeln!(
                    std::io::stderr(),
                    "note: this policy loads nothing on access (instructions.on-access is \
                     false); a policy that sets it does (shipped: {})",
                    loading.join(", ")
                );
            }
            // Files left out for want of room: say why, as the JSON's
            // `skipped` does (a budget of 0 lets no project file in).
            let short = |reason: lisa_context::snapshot::Reason| {
                access.skipped.iter().filter(|s| s.reason == reason).count()
            };
            let (budget, share) = (
                short(lisa_context::snapshot::Reason::BudgetExhausted),
                short(lisa_context::snapshot::Reason::PromptShare),
            );
            if budget > 0 {
                let _ = writeln!(
                    std::io::stderr(),
                    "note: {budget} file(s) not loaded: the instruction budget has no room \
                     left (instructions.budget-bytes, less what the session's context used, \
                     within instructions.access-budget-bytes; 0 lets no project file in)"
                );
            }
            if share > 0 {
                let _ = writeln!(
                    std::io::stderr(),
                    "note: {share} file(s) not loaded: the repository's share of the prompt \
                     is full (instructions.project-prompt-bytes)"
                );
            }
            match format {
                Format::Text => write_out(&mut out, access.prompt.as_bytes()),
                Format::Json => {
                    let json = json::pretty(&access)
                        .map_err(|e| miette::miette!("cannot encode the access: {e}"))?;
                    write_out(&mut out, json.as_bytes())
                }
            }
        }
        Command::Explain { place, format } => {
            let loader = loader(&cli)?;
            let cwd = cwd_of(place)?;
            let root = place.root.as_deref().map(absolute);
            let snap = loader.snapshot_in(&cwd, root.as_deref())?;
            let policy = loader.policy().ok();
            let text = match format {
                Format::Text => explain::table(&snap, policy.as_deref()),
                Format::Json => json::pretty(&explain::explanation(&snap, policy.as_deref()))
                    .map_err(|e| miette::miette!("cannot encode the explanation: {e}"))?,
            };
            write_out(&mut out, text.as_bytes())
        }
        Command::Fingerprint { place } => {
            let loader = loader(&cli)?;
            let cwd = cwd_of(place)?;
            let root = place.root.as_deref().map(absolute);
            let fp = loader.fingerprint_in(&cwd, root.as_deref())?;
            if cli.verbose {
                narrate(&cli, &loader, &*loader.snapshot_in(&cwd, root.as_deref())?);
            }
            write_out(&mut out, format!("{fp}\n").as_bytes())
        }
        Command::Policy {
            command: PolicyCommand::Check { file: Some(file) },
        } => {
            let file = absolute(file);
            let shown = lisa_context::snapshot::terminal_safe(&file.to_string_lossy()).into_owned();
            // A home's policy file (by its name, or because it sits in the
            // home) is checked as the home layer, with that layer's own
            // rule; any other file as a --policy file.
            let home = builder(&cli).resolve().ok().and_then(|(_, home)| home);
            let named_as_home = file
                .file_name()
                .is_some_and(|n| n == lisa_context::policy::HOME_POLICY_FILE);
            let in_home = home.as_deref().is_some_and(|h| file.parent() == Some(h));
            let (layer, role) = if named_as_home || in_home {
                (Layer::Home, "the home's policy (over the built-in one)")
            } else {
                (
                    Layer::CommandLine,
                    "a --policy file (over the built-in and home policies)",
                )
            };
            let source = PolicySource::read(layer, &file, true)?
                .ok_or_else(|| miette::miette!("{shown} does not exist"))?;
            let policy = Policy::from_sources(&[PolicySource::builtin(), source])?;
            let home_key = lisa_context::policy::keys::ROOTS.home;
            if layer == Layer::Home
                && policy
                    .definition(home_key)
                    .is_some_and(|d| d.layer == Layer::Home)
            {
                let invalid = policy.invalid_value(
                    home_key,
                    "the home's own policy cannot set `roots.home`: it was read from the home \
                     those candidates would replace (set it in a --policy file instead)",
                );
                return Err(lisa_context::policy::PolicyError::Invalid(invalid).into());
            }
            write_out(
                &mut out,
                format!("ok: {shown} is a valid policy, checked as {role}\n").as_bytes(),
            )
        }
        Command::Policy {
            command: PolicyCommand::Check { file: None },
        } => {
            let policy = load_policy(&cli)?;
            let names: Vec<String> = policy
                .layers()
                .iter()
                .map(|(_, n)| lisa_context::snapshot::terminal_safe(n).into_owned())
                .collect();
            write_out(
                &mut out,
                format!(
                    "ok: the effective policy is valid ({})\n",
                    names.join(" + ")
                )
                .as_bytes(),
            )
        }
        Command::Policy {
            command: PolicyCommand::Show,
        } => {
            let policy = load_policy(&cli)?;
            write_out(&mut out, policy.to_annotated_toml().as_bytes())
        }
        Command::Skill {
            command: SkillCommand::List { place, format },
        } => {
            let loader = loader(&cli)?;
            let cwd = cwd_of(place)?;
            let root = place.root.as_deref().map(absolute);
            let snap = loader.snapshot_in(&cwd, root.as_deref())?;
            let list = lisa_context::protocol::SkillList::of(&snap);
            let text = match format {
                Format::Text => explain::skill_table(&snap, &list),
                Format::Json => json::pretty(&list)
                    .map_err(|e| miette::miette!("cannot encode the skill list: {e}"))?,
            };
            write_out(&mut out, text.as_bytes())
        }
        Command::Skill {
            command: SkillCommand::Show { name, place },
        } => {
            let loader = loader(&cli)?;
            let cwd = cwd_of(place)?;
            let root = place.root.as_deref().map(absolute);
            let skill = loader.skill_in(&cwd, root.as_deref(), name)?;
            write_out(&mut out, skill.content.as_bytes())
        }
        Command::Rule {
            command:
                RuleCommand::Show {
                    name,
                    place,
                    format,
                },
        } => {
            let loader = loader(&cli)?;
            let cwd = cwd_of(place)?;
            let root = place.root.as_deref().map(absolute);
            let rule = loader.rule_in(&cwd, root.as_deref(), name)?;
            let text = match format {
                Format::Text => {
                    let mut body = rule.content;
                    body.push('\n');
                    body
                }
                Format::Json => json::pretty(&rule)
                    .map_err(|e| miette::miette!("cannot encode the rule: {e}"))?,
            };
            write_out(&mut out, text.as_bytes())
        }
        Command::Trust { command } => {
            let loader = loader(&cli)?;
            let place = match command {
                TrustCommand::Status { place, .. }
                | TrustCommand::Diff { place, .. }
                | TrustCommand::Approve { place, .. }
                | TrustCommand::Revoke { place, .. } => place,
            };
            let cwd = cwd_of(place)?;
            let root = place.root.as_deref().map(absolute);
            let root = root.as_deref();
            let text = match command {
                TrustCommand::Status {
                    format: Format::Json,
                    ..
                } => json::pretty(&loader.trust_status(&cwd, root)?)
                    .map_err(|e| miette::miette!("cannot encode the trust status: {e}"))?,
                TrustCommand::Status { .. } => {
                    let open = loader
                        .policy()
                        .is_ok_and(|p| p.trust.project == lisa_context::policy::ProjectTrust::Open);
                    trust::status_text(&loader.trust_status(&cwd, root)?, open)
                }
                TrustCommand::Diff {
                    format: Format::Json,
                    ..
                } => json::pretty(&lisa_context::protocol::TrustDiff::of(
                    &loader.trust_status(&cwd, root)?,
                ))
                .map_err(|e| miette::miette!("cannot encode the trust diff: {e}"))?,
                TrustCommand::Diff { .. } => trust::diff_text(&loader.trust_status(&cwd, root)?),
                TrustCommand::Approve {
                    all, expect, paths, ..
                } => trust::approve(&loader, &cwd, root, *all, expect, paths)?,
                TrustCommand::Revoke { repo, paths, .. } => {
                    trust::revoke(&loader, &cwd, root, *repo, paths)?
                }
            };
            write_out(&mut out, text.as_bytes())
        }
        Command::Completions { shell } => {
            let mut text = Vec::new();
            clap_complete::generate(*shell, &mut Cli::command(), "lisa-context", &mut text);
            write_out(&mut out, &text)
        }
        Command::Man => {
            let text = man::page(Cli::command())
                .map_err(|e| miette::miette!("cannot render the manual page: {e}"))?;
            write_out(&mut out, text.as_bytes())
        }
        Command::Survey {
            place,
            policies,
            with_home_policy,
            format,
            deny,
        } => {
            let cwd = cwd_of(place)?;
            let root = place.root.as_deref().map(absolute);
            let names: Vec<String> = if policies.is_empty() {
                lisa_context::policy::SHIPPED_NAMES
                    .iter()
                    .map(|n| (*n).to_string())
                    .collect()
            } else {
                policies.clone()
            };
            // One ordinary build per policy, side by side.
            let builders = names.iter().map(|name| {
                let mut b = Loader::builder()
                    .shipped_policy(name.clone())
                    .home_policy(*with_home_policy);
                if let Some(home) = &cli.home {
                    b = b.home(absolute(home));
                }
                (name.clone(), b)
            });
            let survey = match lisa_context::protocol::Survey::run(builders, &cwd, root.as_deref())
            {
                Ok(s) => s,
                Err(lisa_context::SurveyError::Bootstrap { source, .. }) => {
                    return Err(source.into());
                }
                Err(lisa_context::SurveyError::Snapshot { source, .. }) => {
                    return Err(source.into());
                }
                Err(e) => return Err(miette::miette!("{e}")),
            };
            let encoded = |v: Result<String, serde_json::Error>| {
                v.map_err(|e| miette::miette!("cannot encode the survey: {e}"))
            };
            let text = match format {
                SurveyFormat::Text => explain::survey_table(&survey),
                SurveyFormat::Json => encoded(json::pretty(&survey))?,
                SurveyFormat::Sarif => encoded(json::pretty(&survey.sarif()))?,
            };
            write_out(&mut out, text.as_bytes())?;
            Ok(if deny.is_some() && !survey.problems.is_empty() {
                FAILED
            } else {
                OK
            })
        }
        Command::Serve {
            jobs,
            homes_under,
            homes_max,
            cache_bytes,
            cache_entries,
            handle_budget,
        } => {
            // The workers write to stdout themselves.
            drop(out);
            let jobs = jobs.map_or_else(
                || {
                    std::thread::available_parallelism()
                        .map_or(1, std::num::NonZeroUsize::get)
                        .min(serve::MAX_JOBS)
                },
                usize::from,
            );
            // An invalid policy does not stop the server: each request gets
            // a `policy-invalid` error until the file is fixed.
            // One cache for every home (`LoaderBuilder::share`): the own
            // loader's bounds are the server's.
            let mut own =
                builder(&cli).capacity(cache_entries.map_or(serve::DEFAULT_CACHE_ENTRIES, |n| {
                    usize::try_from(n).unwrap_or(usize::MAX)
                }));
            if let Some(n) = cache_bytes {
                own = own.cache_bytes(usize::try_from(*n).unwrap_or(usize::MAX));
            }
            if let Some(n) = handle_budget {
                own = own.handle_budget(usize::try_from(*n).unwrap_or(usize::MAX));
            }
            let loader = own.build_lenient()?.watched();
            let policy = cli.policy.clone();
            let no_home_policy = cli.no_home_policy;
            let homes = serve::Homes::new(
                loader,
                homes_under.as_deref().map(absolute),
                homes_max.map_or(serve::DEFAULT_HOMES, |n| n as usize),
                move |own, under, home| {
                    Ok(layers(None, policy.as_deref(), no_home_policy)
                        .home_below(under, home)?
                        .share(own)
                        .build_lenient()?
                        .watched())
                },
            );
            let out = std::sync::Mutex::new(std::io::stdout());
            serve::serve(&homes, std::io::stdin().lock(), &out, jobs)
                .map_err(|e| miette::miette!("serve: {e}"))?;
            Ok(OK)
        }
    }
}

/// With `--verbose`, what the loader decided, on stderr: the policy layers,
/// the roots, and every candidate with what happened to it (the `explain`
/// table).
fn narrate(cli: &Cli, loader: &Loader, snap: &lisa_context::Snapshot) {
    if !cli.verbose {
        return;
    }
    let mut text = String::from("lisa-context: policy layers, lowest first:\n");
    let layers = loader
        .policy()
        .map(|p| p.layers().to_vec())
        .unwrap_or_default();
    for (layer, name) in &layers {
        text.push_str(&format!(
            "  {}: {}\n",
            layer.as_str(),
            lisa_context::snapshot::terminal_safe(name)
        ));
    }
    let home = loader.home().map_or_else(
        || "none".to_string(),
        |h| lisa_context::snapshot::terminal_safe(&h.to_string_lossy()).into_owned(),
    );
    text.push_str(&format!("lisa-context: home root: {home}\n"));
    text.push_str(&explain::table(snap, loader.policy().ok().as_deref()));
    let _ = std::io::stderr().write_all(text.as_bytes());
}

fn write_out(out: &mut impl Write, bytes: &[u8]) -> miette::Result<u8> {
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(OK),
        // A closed pipe (`| head`) is not an error worth a report.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(OK),
        Err(e) => Err(miette::miette!("cannot write the output: {e}")),
    }
}
