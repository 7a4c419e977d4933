// Runs the SQL statements in a file with DuckDB and prints each result as a
// table. Used by scripts/duckdb/check.sh to prove the README's queries work
// on a real output folder.
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const [file, outDir] = process.argv.slice(2);
let sql = readFileSync(file, 'utf8').replaceAll('/tmp/neardup-out', outDir);
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
for (const stmt of sql.split(';').map(s => s.trim()).filter(s => s.replace(/--.*$/gm, '').trim())) {
  const r = await con.runAndReadAll(stmt);
  const rows = r.getRows();
  console.log(stmt.split('\n').filter(l => l.startsWith('--')).join('\n'));
  console.log(r.columnNames().join(' | '));
  for (const row of rows) console.log(row.map(v => v === null ? 'NULL' : String(v)).join(' | '));
  if (rows.length === 0) { console.error('query returned no rows:\n' + stmt); process.exit(1); }
  console.log();
}
