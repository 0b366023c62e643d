//! The manual page: one page, like `rg.1`, generated from the same command
//! definition as `--help` (each command's synopsis and options drawn by
//! clap_mangen), with the sections a page needs beyond it: every command,
//! EXIT STATUS, ENVIRONMENT and FILES (the file names taken from the
//! built-in policy, which declares them).

use clap_mangen::Man;

/// The whole page of the command `cmd` (the command line's definition), as
/// roff.
pub fn page(cmd: clap::Command) -> Result<String, std::io::Error> {
    let man = Man::new(cmd.clone());
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    let mut text = String::from_utf8_lossy(&out).into_owned();
    text.push_str(".SH COMMANDS\n");
    for sub in cmd.get_subcommands() {
        commands(&mut text, "lisa-context", sub)?;
    }
    text.push_str(&fixed_sections());
    let mut tail = Vec::new();
    man.render_version_section(&mut tail)?;
    text.push_str(&String::from_utf8_lossy(&tail));
    Ok(text)
}

/// One command (and those below it): its usage line, what it does, and its
/// own options.
fn commands(text: &mut String, parent: &str, cmd: &clap::Command) -> Result<(), std::io::Error> {
    if cmd.is_hide_set() || cmd.get_name() == "help" {
        return Ok(());
    }
    let name = format!("{parent} {}", cmd.get_name());
    let has_children = cmd
        .get_subcommands()
        .any(|s| !s.is_hide_set() && s.get_name() != "help");
    text.push_str(&format!(".SS \"{}\"\n", roff_text(&usage(&name, cmd))));
    let about = cmd
        .get_long_about()
        .or_else(|| cmd.get_about())
        .map(|a| a.to_string())
        .unwrap_or_default();
    if !about.is_empty() {
        text.push_str(&roff_text(&about));
        text.push('\n');
    }
    // This command's own options, drawn by clap_mangen without its heading.
    let own = cmd.clone().mut_args(|a| a).disable_help_flag(true);
    let has_options = own
        .get_arguments()
        .any(|a| !a.is_global_set() && !a.is_hide_set());
    if has_options {
        let mut buf = Vec::new();
        Man::new(own).render_options_section(&mut buf)?;
        let options = String::from_utf8_lossy(&buf);
        for line in options.lines().filter(|l| !l.starts_with(".SH")) {
            text.push_str(line);
            text.push('\n');
        }
    }
    if has_children {
        for sub in cmd.get_subcommands() {
            commands(text, &name, sub)?;
        }
    }
    Ok(())
}

/// `lisa-context snapshot [OPTIONS] <ARGS>`: the command's own arguments.
fn usage(name: &str, cmd: &clap::Command) -> String {
    let mut line = name.to_string();
    if cmd
        .get_arguments()
        .any(|a| !a.is_positional() && !a.is_global_set() && !a.is_hide_set())
    {
        line.push_str(" [OPTIONS]");
    }
    for a in cmd.get_positionals() {
        let value = a
            .get_value_names()
            .and_then(|v| v.first())
            .map_or_else(|| a.get_id().to_string().to_uppercase(), |v| v.to_string());
        if a.is_required_set() {
            line.push_str(&format!(" <{value}>"));
        } else {
            line.push_str(&format!(" [{value}]"));
        }
    }
    if cmd.get_subcommands().any(|s| s.get_name() != "help") {
        line.push_str(" <COMMAND>");
    }
    line
}

/// Text safe in a roff line: backslashes doubled, a leading dot or quote
/// escaped, dashes kept as dashes.
fn roff_text(s: &str) -> String {
    s.lines()
        .map(|l| {
            let l = l.replace('\\', "\\e").replace('-', "\\-");
            if l.starts_with('.') || l.starts_with('\'') {
                format!("\\&{l}")
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// EXIT STATUS, ENVIRONMENT, FILES and SEE ALSO.
fn fixed_sections() -> String {
    let policy = lisa_context::policy::Policy::builtin().ok();
    let name = |f: fn(&lisa_context::policy::Policy) -> String, default: &str| {
        policy.as_ref().map_or_else(|| default.to_string(), f)
    };
    let nonce = name(|p| p.trust.nonce_key_file.clone(), "context-nonce.key");
    let store = name(|p| p.trust.store_file.clone(), "context-trust.json");
    let memo = name(
        |p| p.skills.frontmatter_memo_file.clone(),
        "context-frontmatter.memo",
    );
    let home_policy = lisa_context::policy::HOME_POLICY_FILE;
    let mut s = String::new();
    s.push_str(".SH \"EXIT STATUS\"\n");
    for (code, what) in [
        (
            "0",
            "Success (a snapshot that records unreadable or refused files is still a success).",
        ),
        (
            "1",
            "Failure: an invalid policy (every problem is printed), a cwd that does not exist, a \
             root that does not contain the cwd, a home that is not a directory, no such skill, \
             running out of file descriptors.",
        ),
        (
            "2",
            "A usage error: an unknown option or command, a missing or malformed argument.",
        ),
    ] {
        s.push_str(&format!(".TP\n\\fB{code}\\fR\n{}\n", roff_text(what)));
    }
    s.push_str(".SH ENVIRONMENT\n");
    for (var, what) in [
        (
            "LISA_HOME",
            "The home root, when \\-\\-home is not given (the built-in policy's first candidate \
             for roots.home; then ~/.lisa). An empty value counts as unset.",
        ),
        (
            "LISA_CONTEXT_POLICY",
            "The default of \\-\\-policy: a policy file, or a shipped policy's name. Read by every \
             front end (the commands, serve, the Node package).",
        ),
        (
            "LISA_CONTEXT_STATE",
            "An absolute folder where every shipped policy keeps the loader's own files (the \
             nonce key, the frontmatter memo, the trust store), one folder per home below it, \
             so that nothing is written in the home (roots.state's first candidate).",
        ),
        (
            "NO_COLOR",
            "When set and not empty, diagnostics are not coloured under \\-\\-color auto.",
        ),
        (
            "COLUMNS",
            "Not used: diagnostics are drawn the same whatever the terminal's width.",
        ),
    ] {
        s.push_str(&format!(".TP\n\\fB{var}\\fR\n{what}\n"));
    }
    s.push_str(".SH FILES\n");
    for (file, what) in [
        (
            home_policy.to_string(),
            "In the home root: the user's own policy, laid over the built\\-in one (a repository \
             never sets policy). Skipped for one run with \\-\\-no\\-home\\-policy."
                .to_string(),
        ),
        (
            nonce,
            "In the state root (the home under the built\\-in policy, unless \
             LISA_CONTEXT_STATE is set): the random key the prompt's nonce is derived from, \
             created on the first snapshot (mode 0600)."
                .to_string(),
        ),
        (
            memo,
            "In the state root: frontmatter parsed by earlier runs, a cache written by \
             snapshots; delete it at will."
                .to_string(),
        ),
        (
            store,
            "In the state root: the user's approvals under trust.project = \"pinned\", \
             written by trust approve and trust revoke."
                .to_string(),
        ),
    ] {
        s.push_str(&format!(".TP\n\\fI{}\\fR\n{what}\n", roff_text(&file)));
    }
    s.push_str(
        ".SH \"SEE ALSO\"\nThe project's README.md, docs/cli.md (the commands), docs/policy.md \
         (every policy key), docs/protocol.md (serve and the JSON outputs).\n",
    );
    s
}
