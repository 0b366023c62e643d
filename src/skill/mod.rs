//! Skill files: parsing SKILL.md.

pub mod cache;
pub mod frontmatter;
