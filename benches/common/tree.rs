//! The shared depth × skills fixture: a repository whose instruction chain
//! has `depth` levels (an `AGENTS.md` of 1–2 KB at every level, a
//! `CLAUDE.md` at every third), a home with an `AGENTS.md`, and `skills`
//! project skills in `.agents/skills`, each `SKILL.md` a frontmatter of about
//! 200 bytes and a body of about 2 KB. Used by the callgrind bench, the
//! whole-process measurement and the peers script (through
//! `examples/perf_tree.rs`), so every figure is taken on the same trees.

use std::path::{Path, PathBuf};

use super::{Lcg, WORDS, sentence, text};

/// A written fixture.
pub struct Tree {
    /// The home root.
    pub home: PathBuf,
    /// The repository root.
    pub repo: PathBuf,
    /// The deepest level: the cwd of every measurement.
    pub cwd: PathBuf,
    /// The project skills folder.
    pub skills: PathBuf,
    /// Every `SKILL.md`, in name order.
    pub skill_files: Vec<PathBuf>,
}

/// Writes the fixture under `base` (which must exist and be empty).
pub fn write(base: &Path, depth: usize, skills: usize, seed: u64) -> std::io::Result<Tree> {
    let mut rng = Lcg(seed);
    let home = base.join("home");
    std::fs::create_dir_all(&home)?;
    std::fs::write(home.join("AGENTS.md"), text(&mut rng, 1024, 2048))?;
    let repo = base.join("repo");
    std::fs::create_dir_all(repo.join(".git"))?;
    let mut dir = repo.clone();
    for level in 0..depth.max(1) {
        if level > 0 {
            dir.push(format!("{}{level:02}", WORDS[rng.below(WORDS.len())]));
            std::fs::create_dir(&dir)?;
        }
        std::fs::write(dir.join("AGENTS.md"), text(&mut rng, 1024, 2048))?;
        if level % 3 == 1 {
            std::fs::write(dir.join("CLAUDE.md"), text(&mut rng, 1024, 2048))?;
        }
    }
    let source = repo.join(".agents/skills");
    std::fs::create_dir_all(&source)?;
    let mut skill_files = Vec::new();
    for i in 0..skills {
        let name = format!(
            "{}-{}-{i:05}",
            WORDS[rng.below(WORDS.len())],
            WORDS[rng.below(WORDS.len())]
        );
        let folder = source.join(&name);
        std::fs::create_dir(&folder)?;
        let mut description = sentence(&mut rng);
        while description.len() < 130 {
            description.push(' ');
            description.push_str(&sentence(&mut rng));
        }
        description.truncate(150);
        let front = format!(
            "---\nname: {name}\ndescription: {}\nlicense: MIT\n---\n",
            description.trim_end()
        );
        let file = folder.join("SKILL.md");
        std::fs::write(&file, front + &text(&mut rng, 1900, 2200))?;
        skill_files.push(file);
    }
    skill_files.sort();
    Ok(Tree {
        home,
        repo,
        cwd: dir,
        skills: source,
        skill_files,
    })
}
