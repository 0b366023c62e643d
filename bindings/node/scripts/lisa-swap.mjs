// The swap of Lisa's loader for `lisa-context/lisa`, as the READMEs give
// it: each fenced block after a marker `<!-- lisa-swap: PATH -->` is the
// whole text of Lisa's file PATH. The package's README and the repository's
// must give the same blocks. What `test/lisa-swap.test.mjs` and
// `scripts/lisa-suite.sh` run, so that what is documented is what is tested.
//
//   node scripts/lisa-swap.mjs OUT_DIR    writes OUT_DIR/PATH for each block
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = path.resolve(here, "..");

/** The README files that document the swap: the package's, then the repository's. */
export const READMES = [path.join(pkg, "README.md"), path.resolve(pkg, "../../README.md")];

/** The marked blocks of one Markdown text: `[path, text]` in order. */
export function swapBlocks(markdown) {
  const blocks = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const m = /^<!-- lisa-swap: (\S+) -->$/.exec(lines[i]);
    if (!m) continue;
    let j = i + 1;
    while (j < lines.length && lines[j].trim() === "") j++;
    if (!/^```/.test(lines[j] ?? "")) throw new Error(`no fenced block after the marker for ${m[1]}`);
    const body = [];
    for (j++; j < lines.length && !/^```/.test(lines[j]); j++) body.push(lines[j]);
    if (j >= lines.length) throw new Error(`the block for ${m[1]} is not closed`);
    blocks.push([m[1], body.join("\n") + "\n"]);
    i = j;
  }
  return blocks;
}

/** The swap, from both READMEs (which must agree): `[path, text]` in order. */
export function documentedSwap() {
  const [first, ...others] = READMES.map((f) => [f, swapBlocks(readFileSync(f, "utf8"))]);
  if (first[1].length === 0) throw new Error(`${first[0]} documents no swap (no <!-- lisa-swap: PATH --> block)`);
  for (const [file, blocks] of others) {
    if (JSON.stringify(blocks) !== JSON.stringify(first[1])) {
      throw new Error(`${file} and ${first[0]} document different swaps`);
    }
  }
  return first[1];
}

/** Writes the swap's files under `dir`; returns their paths. */
export function writeSwap(dir) {
  return documentedSwap().map(([rel, text]) => {
    const file = path.join(dir, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    return file;
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (!out) {
    console.error("usage: node scripts/lisa-swap.mjs OUT_DIR");
    process.exit(2);
  }
  for (const f of writeSwap(out)) console.log(f);
}
