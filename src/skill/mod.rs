//! Skill files: parsing SKILL.md.

pub mod frontmatter;
