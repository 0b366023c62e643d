#!/usr/bin/env python3
"""Writes the depth x skills fixture of benches/common/tree.rs (same shape and
sizes, text from a seeded generator): a home with an AGENTS.md, a repository
whose chain has DEPTH levels (AGENTS.md of 1-2 KB at each, CLAUDE.md at every
third), and SKILLS project skills in .agents/skills (frontmatter ~200 B, body
~2 KB). Prints the cwd (the deepest level).

usage: fixture.py DIR DEPTH SKILLS
"""
import os
import random
import sys

WORDS = ("build test module crate function always never prefer avoid the a and or with "
         "without before after commit review branch error handle return value type trait "
         "struct enum field docs comment format lint warning release debug logging config "
         "path file folder script command run check deploy service client server request "
         "response schema migration database query index cache timeout retry async thread "
         "lock channel buffer stream parse encode decode naming style tabs spaces width "
         "import export public private internal").split()


def sentence(rng):
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 16))]
    return (" ".join(words)).capitalize() + "."


def text(rng, lo, hi):
    target = rng.randint(lo, hi)
    out = f"# Notes {rng.randint(0, 9999)}\n\n"
    section = 1
    while len(out) < target:
        k = rng.randint(0, 4)
        if k == 0:
            out += f"\n## Section {section}\n\n"
            section += 1
        elif k < 3:
            out += "- " + sentence(rng) + "\n"
        else:
            out += sentence(rng) + " " + sentence(rng) + "\n\n"
    return out[:target] + "\n"


def main():
    base, depth, skills = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    rng = random.Random(depth * 7919 + skills)
    home = os.path.join(base, "home")
    os.makedirs(home, exist_ok=True)
    open(os.path.join(home, "AGENTS.md"), "w").write(text(rng, 1024, 2048))
    repo = os.path.join(base, "repo")
    os.makedirs(os.path.join(repo, ".git"), exist_ok=True)
    d = repo
    for level in range(max(depth, 1)):
        if level > 0:
            d = os.path.join(d, f"{rng.choice(WORDS)}{level:02d}")
            os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "AGENTS.md"), "w").write(text(rng, 1024, 2048))
        if level % 3 == 1:
            open(os.path.join(d, "CLAUDE.md"), "w").write(text(rng, 1024, 2048))
    source = os.path.join(repo, ".agents", "skills")
    os.makedirs(source, exist_ok=True)
    for i in range(skills):
        name = f"{rng.choice(WORDS)}-{rng.choice(WORDS)}-{i:05d}"
        folder = os.path.join(source, name)
        os.makedirs(folder, exist_ok=True)
        desc = sentence(rng)
        while len(desc) < 130:
            desc += " " + sentence(rng)
        desc = desc[:150].rstrip()
        front = f"---\nname: {name}\ndescription: {desc}\nlicense: MIT\n---\n"
        open(os.path.join(folder, "SKILL.md"), "w").write(front + text(rng, 1900, 2200))
    print(d)


if __name__ == "__main__":
    main()
