import { readFile } from 'node:fs/promises';
import { InputError } from '../harness/errors.js';
import { assertFile, stripBom, type Problems } from './lines.js';

/**
 * RFC 4180 CSV: comma-separated, fields optionally in double quotes, `""` escapes a quote inside quotes, quoted
 * fields may span lines. Each record carries the 1-based line it starts on, so errors point into the file.
 * Private memory stores are small (thousands of rows), so the file is read whole. With `problems`, a row with
 * the wrong number of fields is recorded there and left out instead of thrown.
 */
export async function readCsv(file: string, problems?: Problems): Promise<{ header: string[]; rows: { cells: string[]; line: number }[] }> {
  await assertFile(file);
  const text = stripBom(await readFile(file, 'utf8'));
  const records = parseCsv(file, text);
  const head = records.shift();
  if (head === undefined) throw new InputError(file, 1, 'empty CSV file: expected a header row');
  const rows = records.filter((r) => !(r.cells.length === 1 && r.cells[0] === ''));
  const whole = rows.filter((r) => {
    if (r.cells.length === head.cells.length) return true;
    const err = new InputError(file, r.line, `${r.cells.length} fields, but the header has ${head.cells.length}`);
    if (problems === undefined) throw err;
    problems.add(err);
    return false;
  });
  return { header: head.cells, rows: whole };
}

export function parseCsv(file: string, text: string): { cells: string[]; line: number }[] {
  const out: { cells: string[]; line: number }[] = [];
  let cells: string[] = [];
  let field = '';
  let line = 1;
  let recordLine = 1;
  let i = 0;
  let quoted = false;
  let fieldStarted = false;
  const endField = () => {
    cells.push(field);
    field = '';
    fieldStarted = false;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i += 1;
        const next = text[i];
        if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r') {
          throw new InputError(file, line, 'unexpected character after a closing quote');
        }
        continue;
      }
      if (c === '\n') line += 1;
      field += c;
      i += 1;
      continue;
    }
    if (c === '"') {
      if (fieldStarted || field !== '') throw new InputError(file, line, 'a quote inside an unquoted field; quote the whole field');
      quoted = true;
      fieldStarted = true;
      i += 1;
    } else if (c === ',') {
      endField();
      i += 1;
    } else if (c === '\n' || c === '\r') {
      endField();
      out.push({ cells, line: recordLine });
      cells = [];
      if (c === '\r' && text[i + 1] === '\n') i += 1;
      i += 1;
      line += 1;
      recordLine = line;
    } else {
      field += c;
      i += 1;
    }
  }
  if (quoted) throw new InputError(file, recordLine, 'unterminated quoted field (file truncated?)');
  if (field !== '' || cells.length > 0 || fieldStarted) {
    endField();
    out.push({ cells, line: recordLine });
  }
  return out;
}
