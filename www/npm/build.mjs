// Assemble and pack the `tallmc` npm package (what `make npm` runs):
//
//   node www/npm/build.mjs [--out target/npm]
//
// Stages OUT/tallmc/ from the wasm build in www/pkg (`make wasm`), the element's modules in www/
// (embed.js and everything it loads, followed through `import … from './…'` and
// `new URL('…', import.meta.url)`, workers and wasm included) and this folder's package.json,
// README.md, index.js and the hand-written declarations, then runs `npm pack` there and prints
// the tarball's path. The version and licence come from Cargo.toml's [workspace.package].
// Fails, naming the file, when the staged files and package.json's `files` differ, or when a
// module imports a bare specifier (the package has no dependencies and must keep none).
// Also importable: `buildPackage({ out }) -> { tarball, stage, files, version }`.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..');
const WWW = path.join(ROOT, 'www');

/** Files of this folder that go into the package as they are. */
const OWN = ['README.md', 'index.js', 'index.d.ts', 'embed.d.ts'];
/** wasm-bindgen's declarations, next to the module they describe. */
const WASM_TYPES = ['pkg/tallmc_web.d.ts', 'pkg/tallmc_web_bg.wasm.d.ts'];

/** `version` and `license` of Cargo.toml's [workspace.package]. */
function cargoPackage() {
  const toml = fs.readFileSync(path.join(ROOT, 'Cargo.toml'), 'utf8');
  const sec = toml.split(/^\[workspace\.package\]\s*$/m)[1]?.split(/^\[/m)[0] ?? '';
  const get = (k) => sec.match(new RegExp(`^${k}\\s*=\\s*"([^"]*)"`, 'm'))?.[1];
  const version = get('version');
  const license = get('license');
  if (!version || !license) throw new Error('Cargo.toml: [workspace.package] has no version or license');
  return { version, license };
}

/** Relative references of one module: static imports, re-exports, dynamic imports, URL assets. */
function references(file) {
  const src = fs.readFileSync(file, 'utf8');
  const refs = [];
  const patterns = [
    /\b(?:import|export)\s[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\bnew URL\(\s*['"]([^'"]+)['"]\s*,\s*import\.meta\.url\s*\)/g,
  ];
  for (const re of patterns) {
    for (const m of src.matchAll(re)) {
      const spec = m[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(spec) || spec.startsWith('/')) {
        throw new Error(`${path.relative(ROOT, file)}: "${spec}" is not a relative reference; the package must be self-contained`);
      }
      const isUrl = re.source.startsWith('\\bnew URL');
      if (!isUrl && !spec.startsWith('./') && !spec.startsWith('../')) {
        throw new Error(`${path.relative(ROOT, file)}: imports the bare specifier "${spec}"; the package has no dependencies`);
      }
      refs.push(spec);
    }
  }
  return refs;
}

/** embed.js and every file it loads, transitively, as paths relative to www/. */
function closure(entry) {
  const seen = new Set();
  const todo = [entry];
  while (todo.length) {
    const rel = todo.pop();
    if (seen.has(rel)) continue;
    const abs = path.join(WWW, rel);
    if (!abs.startsWith(WWW + path.sep)) throw new Error(`${rel}: outside www/`);
    if (!fs.existsSync(abs)) {
      const hint = rel.startsWith('pkg/') ? ' (run `make wasm` first)' : '';
      throw new Error(`www/${rel} is missing${hint}`);
    }
    seen.add(rel);
    if (!/\.m?js$/.test(rel)) continue;
    for (const spec of references(abs)) {
      todo.push(path.posix.normalize(path.posix.join(path.posix.dirname(rel), spec)));
    }
  }
  return [...seen].sort();
}

export function buildPackage({ out = path.join(ROOT, 'target', 'npm'), log = () => {} } = {}) {
  const { version, license } = cargoPackage();
  const stage = path.join(out, 'tallmc');
  fs.rmSync(stage, { recursive: true, force: true });
  fs.mkdirSync(stage, { recursive: true });
  const fromWww = closure('embed.js');
  for (const f of WASM_TYPES) {
    if (!fs.existsSync(path.join(WWW, f))) throw new Error(`www/${f} is missing (run \`make wasm\` first)`);
  }
  const files = [];
  for (const rel of [...fromWww, ...WASM_TYPES]) {
    fs.mkdirSync(path.dirname(path.join(stage, rel)), { recursive: true });
    fs.copyFileSync(path.join(WWW, rel), path.join(stage, rel));
    files.push(rel);
  }
  for (const rel of OWN) {
    fs.copyFileSync(path.join(HERE, rel), path.join(stage, rel));
    files.push(rel);
  }
  const pkg = JSON.parse(fs.readFileSync(path.join(HERE, 'package.json'), 'utf8'));
  // package.json's `files` is the list a reader sees; it must be exactly what embed.js needs.
  const listed = [...pkg.files].sort();
  const staged = [...files].sort();
  const missing = staged.filter((f) => !listed.includes(f));
  const extra = listed.filter((f) => !staged.includes(f));
  if (missing.length || extra.length) {
    throw new Error(`www/npm/package.json "files" differs from what the package needs: `
      + `${missing.length ? `add ${missing.join(', ')}` : ''}${missing.length && extra.length ? '; ' : ''}`
      + `${extra.length ? `remove ${extra.join(', ')}` : ''}`);
  }
  pkg.version = version;
  pkg.license = license;
  fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  // npm pack names the tarball tallmc-<version>.tgz; remove older ones so OUT holds one.
  for (const f of fs.readdirSync(out)) if (/^tallmc-.*\.tgz$/.test(f)) fs.rmSync(path.join(out, f));
  const json = execFileSync('npm', ['pack', '--json', '--pack-destination', out], {
    cwd: stage, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
  });
  const info = JSON.parse(json)[0];
  const tarball = path.join(out, info.filename);
  log(`npm package tallmc ${version}: ${info.entryCount} files, ${(info.size / 1e6).toFixed(2)} MB packed, `
    + `${(info.unpackedSize / 1e6).toFixed(2)} MB unpacked`);
  log(tarball);
  return { tarball, stage, files: staged, version };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--out');
  const out = i >= 0 ? path.resolve(process.argv[i + 1]) : undefined;
  try {
    buildPackage({ out, log: (s) => console.log(s) });
  } catch (e) {
    console.error(`www/npm/build.mjs: ${e.message}`);
    process.exit(1);
  }
}
