//! Why a file, a folder or a skill was not used: the one list of reason
//! words.
//!
//! The words are a contract: they appear as `skipped[].reason` and
//! `rejectedSkills[].reason` in snapshot JSON and in `explain`. They come from
//! the enum itself (strum and serde read the same rename rule), so the list
//! cannot drift from the variants.

use serde::Serialize;

/// Why a candidate was not used.
///
/// Declaration order is part of every fingerprint (a traced path that could
/// not be examined is hashed with its reason's position): add new reasons at
/// the end.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, strum::IntoStaticStr, strum::VariantArray,
)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
#[non_exhaustive]
pub enum Reason {
    /// A symlink (at the candidate or on the way to it) leads outside its root,
    /// or is absolute.
    SymlinkEscape,
    /// A symlink, refused because the policy follows none.
    SymlinkRefused,
    /// A FIFO, socket, device or directory where a file was expected.
    NotRegularFile,
    /// The file exists but could not be opened or read (permissions, I/O).
    Unreadable,
    /// The file is larger than the policy allows.
    TooLarge,
    /// The text is blank.
    Empty,
    /// Not UTF-8 text (invalid bytes, or NUL bytes).
    NotText,
    /// The budget had no room left.
    BudgetExhausted,
    /// The directory level is excluded by `instructions.exclude-levels`.
    Excluded,
    /// A skill folder whose name fails the policy's name rule.
    InvalidName,
    /// A folder whose name starts with a dot.
    DotFolder,
    /// A skill folder without a `SKILL.md`.
    MissingSkillFile,
    /// Something other than a folder in a skills source.
    NotADirectory,
    /// `SKILL.md` frontmatter that does not parse.
    BadFrontmatter,
    /// Frontmatter without a usable `name`.
    MissingName,
    /// Frontmatter without a usable `description`.
    MissingDescription,
    /// A description longer than the policy allows.
    DescriptionTooLong,
    /// The frontmatter `name` differs from the folder name.
    Impostor,
    /// The source holds more entries than the policy examines.
    ScanLimit,
    /// A project file with more than one hard link, refused by
    /// `trust.hard-links = "refuse"`.
    HardLink,
    /// A project file under `trust.project = "pinned"` whose content the
    /// user has not approved (new, or changed since the approval).
    Unapproved,
    /// An `@import` whose path leaves the importing file's root (`../`
    /// above it, an absolute path elsewhere, a URL), or the folder its
    /// imports must stay in (`instructions.import-root`; for a home file,
    /// the roots `instructions.compat.home-import-root` gives it, the
    /// repository never among them).
    ImportOutsideRoot,
    /// An `@import` of a file that is already being imported further up.
    ImportCycle,
    /// An `@import` past the policy's count or byte limit for one file.
    ImportLimit,
    /// An `@import` of a file that is not there.
    ImportMissing,
    /// An `@import` in a file imported as deep as the policy allows: left
    /// as written.
    ImportTooDeep,
    /// A rule whose frontmatter scopes it to some paths: listed in
    /// `scopedRules`, loaded when one of them is accessed.
    Scoped,
    /// A file above the repository root (`instructions.compat.ancestor-files`), or
    /// a folder on the way to it, that another user owns (root excepted)
    /// in a folder `roots.safe-directories` does not trust: it may have
    /// been planted in a shared folder, so it is not read (and reported in
    /// `warnings`).
    ForeignOwner,
    /// An `@import` in a file above the repository root: such files import
    /// nothing (below their folder lie other users' folders, not only this
    /// repository). One outside `instructions.import-root` is
    /// `import-outside-root`, as for every file.
    ImportFromAncestor,
    /// A path whose name, or where its links lead, passes through a
    /// version-control metadata folder (`.git`, `.hg`, `.svn`, `.jj`, a
    /// repository marker; for an `@import` also
    /// `instructions.import-excluded-names`): refused by every root for
    /// every read, under every policy.
    VcsMetadata,
    /// A skill name holding a character a reader does not see as written
    /// (a control, a line break, a bidi, zero-width or tag character, white
    /// space other than the plain space...): refused under every policy,
    /// whatever its name rule allows.
    HiddenTextInName,
    /// A rule (`[rules]`) whose mode is `listed`: not a block of the chain;
    /// its name and description are listed for the agent to ask for it
    /// (`rules` in the snapshot).
    RuleListed,
    /// A rule (`[rules]`) whose mode is `manual`: not in the prompt; loaded
    /// only when the user names it.
    RuleManual,
    /// A rule (`[rules]`) that another of the same name replaces
    /// (`rules.compat.one-per-name`): the home's wins, else the one read last.
    RuleReplaced,
    /// An instruction file whose source (the user's files, or the
    /// repository's) already put as many characters in the prompt as
    /// `instructions.compat.home-max-chars` or `project-max-chars` allow.
    CharLimit,
    /// An item of the repository (an instruction file, a listed rule)
    /// left out of the prompt because the repository's share of it
    /// (`instructions.project-prompt-bytes`), every byte it brings counted,
    /// was full.
    PromptShare,
    /// An `@import` of a file this build has read already (a chain file
    /// read before, or an earlier import), under
    /// `instructions.compat.import-once`: left as written (Claude Code
    /// loads each file once).
    ImportRepeated,
}

impl Reason {
    /// Every reason, in declaration order.
    pub const ALL: &'static [Reason] = <Reason as strum::VariantArray>::VARIANTS;

    /// The kebab-case word used in JSON and in `explain`.
    ///
    /// ```
    /// assert_eq!(lisa_context::snapshot::Reason::SymlinkEscape.as_str(), "symlink-escape");
    /// ```
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_match_their_json() {
        assert_eq!(Reason::ALL.len(), 37);
        for r in Reason::ALL {
            let json = serde_json::to_string(r).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", r.as_str()));
        }
        assert_eq!(Reason::ScanLimit.as_str(), "scan-limit");
        assert_eq!(Reason::ScanLimit as u8, 18);
    }
}
