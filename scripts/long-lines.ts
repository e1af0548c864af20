/**
 * Lint: no line of the tree's code over 160 characters (issue 39). Prettier wraps code at 140, but it
 * leaves a string or a comment as written, so a long one is split by hand; this check says where.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const LIMIT = 160;
const CODE = /\.(ts|js|mjs|css)$/;

const files = execFileSync('git', ['ls-files', '-z'], { encoding: 'utf8' })
  .split('\0')
  .filter((f) => CODE.test(f) && !f.startsWith('node_modules/'));
const long: string[] = [];
for (const file of files) {
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.length > LIMIT) long.push(`  ${file}:${i + 1}: ${line.length} characters`);
    });
}
if (long.length > 0) {
  console.error(`long-lines: ${long.length} line(s) over ${LIMIT} characters (split the string or the comment):\n${long.join('\n')}`);
  process.exit(1);
}
console.log(`long-lines: no line over ${LIMIT} characters in ${files.length} files`);
