//! The policies shipped in the binary: the built-in one (Lisa's), the
//! compat policies and the other harnesses' policies, by name.

/// The default policy, reproducing Lisa's loader.
pub const BUILTIN_POLICY: &str = include_str!("../../policies/lisa.toml");

/// The name the built-in policy is shipped under.
pub const BUILTIN_NAME: &str = "lisa";

/// The policies shipped in the binary, by name: the built-in one (Lisa's)
/// and the compat policies that reproduce other harnesses' discovery.
/// `--policy NAME` and `extends = "NAME"` pick one as the base.
pub const SHIPPED: &[(&str, &str)] = &[
    (BUILTIN_NAME, BUILTIN_POLICY),
    ("codex", include_str!("../../policies/codex.toml")),
    ("gemini", include_str!("../../policies/gemini.toml")),
    (
        "claude-code",
        include_str!("../../policies/claude-code.toml"),
    ),
    ("cursor", include_str!("../../policies/cursor.toml")),
    ("copilot", include_str!("../../policies/copilot.toml")),
    ("windsurf", include_str!("../../policies/windsurf.toml")),
    ("cline", include_str!("../../policies/cline.toml")),
    ("opencode", include_str!("../../policies/opencode.toml")),
    ("amp", include_str!("../../policies/amp.toml")),
    ("zed", include_str!("../../policies/zed.toml")),
    ("kiro", include_str!("../../policies/kiro.toml")),
    ("continue", include_str!("../../policies/continue.toml")),
];

/// The names of [`SHIPPED`], in order, read from it: the one list of
/// shipped names that `extends`, `--policy`'s help and completions, errors
/// and `hello` go by.
pub const SHIPPED_NAMES: &[&str] = &{
    let mut names = [""; SHIPPED.len()];
    let mut i = 0;
    while i < names.len() {
        names[i] = SHIPPED[i].0;
        i += 1;
    }
    names
};
