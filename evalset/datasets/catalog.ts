/**
 * Public eval sets `harness datasets get` can fetch. Checksums are the publishers' where they publish one
 * (BEIR: the md5 column of the dataset table in the BEIR README / BeIR Hugging Face card) or ours from a copy we
 * checked (LoCoMo: sha256 of the file at the pinned commit, ../shared/data/locomo/SOURCE.md), or the sha256 and size of
 * the Git LFS pointer at a pinned Hugging Face revision (LongMemEval). `null` means nobody we can cite publishes
 * one: the download is kept, its sha256 printed, and it is reported as not verified. Never invent a checksum.
 */
export interface DatasetEntry {
  readonly name: string;
  readonly summary: string;
  /** Where the file comes from; with a base URL override it is fetched from `<base>/<file>` instead. */
  readonly url: string;
  /** The downloaded file's name under the datasets directory. */
  readonly file: string;
  readonly archive: 'none' | 'zip';
  readonly sha256: string | null;
  readonly md5: string | null;
  /** The file's size in bytes where the publisher states it (Hugging Face's LFS pointer); a download of another size is refused. */
  readonly bytes?: number;
  /** Eval-set format and the path (relative to the datasets directory) to give `--format`/`--path`. */
  readonly format: 'beir' | 'locomo' | 'longmemeval';
  readonly evalsetPath: string;
  readonly license: string;
}

const BEIR_BASE = 'https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets';
const BEIR_LICENSE = 'per BEIR dataset card (mostly CC BY-SA 4.0); check the source dataset licence';
/**
 * LongMemEval on Hugging Face, pinned to one revision so the checksums keep meaning the same bytes. The cleaned
 * release (2025/09; the authors' recommended one, evidence-interfering history sessions removed) and the original
 * one (2024/10, the paper's numbers; its files have no extension). sha256 and sizes are the LFS pointers' of those
 * revisions, as several independent projects pinning the same files record them (docs/adr/0042-streamed-json-datasets.md).
 */
const LME_REVISION = '98d7416c24c778c2fee6e6f3006e7a073259d48f';
const LME_BASE = `https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned/resolve/${LME_REVISION}`;
const LME_ORIGINAL_REVISION = '2ec2a557f339b6c0369619b1ed5793734cc87533';
const LME_ORIGINAL_BASE = `https://huggingface.co/datasets/xiaowu0162/longmemeval/resolve/${LME_ORIGINAL_REVISION}`;
const LME_LICENSE = 'MIT (LongMemEval repository and Hugging Face card)';

function longMemEval(name: string, summary: string, url: string, file: string, sha256: string, bytes: number): DatasetEntry {
  return { name, summary, url, file, archive: 'none', sha256, md5: null, bytes, format: 'longmemeval', evalsetPath: file, license: LME_LICENSE };
}

function beir(name: string, summary: string, md5: string | null): DatasetEntry {
  return {
    name,
    summary: `BEIR ${summary}`,
    url: `${BEIR_BASE}/${name}.zip`,
    file: `${name}.zip`,
    archive: 'zip',
    sha256: null,
    md5,
    format: 'beir',
    evalsetPath: name,
    license: BEIR_LICENSE,
  };
}

export const datasetCatalog: readonly DatasetEntry[] = [
  {
    name: 'locomo',
    summary: 'LoCoMo locomo10.json: 10 conversations, 5,882 turns, 1,986 QAs (Maharana et al., ACL 2024)',
    url: 'https://raw.githubusercontent.com/snap-research/locomo/3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376/data/locomo10.json',
    file: 'locomo10.json',
    archive: 'none',
    sha256: '79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4',
    md5: null,
    format: 'locomo',
    evalsetPath: 'locomo10.json',
    license: 'CC BY-NC 4.0 (non-commercial)',
  },
  longMemEval(
    'longmemeval-oracle',
    'LongMemEval oracle: 500 questions, evidence sessions only, 15 MB (Wu et al., ICLR 2025)',
    `${LME_BASE}/longmemeval_oracle.json`,
    'longmemeval_oracle.json',
    '821a2034d219ab45846873dd14c14f12cfe7776e73527a483f9dac095d38620c',
    15_388_478,
  ),
  longMemEval(
    'longmemeval-s',
    'LongMemEval_S (cleaned): 500 questions, ~40-session haystacks, 277 MB',
    `${LME_BASE}/longmemeval_s_cleaned.json`,
    'longmemeval_s_cleaned.json',
    'd6f21ea9d60a0d56f34a05b609c79c88a451d2ae03597821ea3d5a9678c3a442',
    277_383_467,
  ),
  longMemEval(
    'longmemeval-m',
    'LongMemEval_M (cleaned): 500 questions, ~500-session haystacks, 2.7 GB (read as a stream)',
    `${LME_BASE}/longmemeval_m_cleaned.json`,
    'longmemeval_m_cleaned.json',
    '9d79e5524794a2e6900a3aa9cb7d9152c5a3e8319c9a87c25494ba1eacee495f',
    2_737_100_077,
  ),
  longMemEval(
    'longmemeval-s-original',
    "LongMemEval_S as first released (2024, the paper's numbers), 278 MB",
    `${LME_ORIGINAL_BASE}/longmemeval_s`,
    'longmemeval_s',
    '08d8dad4be43ee2049a22ff5674eb86725d0ce5ff434cde2627e5e8e7e117894',
    278_025_796,
  ),
  longMemEval(
    'longmemeval-m-original',
    "LongMemEval_M as first released (2024, the paper's numbers), 2.7 GB (read as a stream)",
    `${LME_ORIGINAL_BASE}/longmemeval_m`,
    'longmemeval_m',
    'fb5413e3b077c62927daab794836991a2fcfa61ceacab57dc679fb02daaff2d9',
    2_745_274_681,
  ),
  beir('nfcorpus', 'NFCorpus: 3.6K docs, 323 test queries', 'a89dba18a62ef92f7d323ec890a0d38d'),
  beir('scifact', 'SciFact: 5K docs, 300 test queries', '5f7d1de60b170fc8027bb7898e2efca1'),
  beir('fiqa', 'FiQA-2018: 57K docs, 648 test queries', '17918ed23cd04fb15047f73e6c3bd9d9'),
  beir('trec-covid', 'TREC-COVID: 171K docs, 50 test queries', 'ce62140cb23feb9becf6270d0d1fe6d1'),
  beir('nq', 'NQ: 2.68M docs, 3,452 test queries', 'd4d3d2e48787a744b6f6e691ff534307'),
  beir('hotpotqa', 'HotpotQA: 5.23M docs, 7,405 test queries', 'f412724f78b0d91183a0e86805e16114'),
  beir('msmarco', 'MS MARCO: 8.84M passages, 6,980 dev queries', '444067daf65d982533ea17ebd59501e4'),
  beir('arguana', 'ArguAna: 8.67K docs, 1,406 test queries', '8ad3e3c2a5867cdced806d6503f29b99'),
  beir('scidocs', 'SCIDOCS: 25.6K docs, 1,000 test queries', '38121350fc3a4d2f48850f6aff52e4a9'),
  beir('quora', 'Quora: 523K docs, 10,000 test queries', '18fb154900ba42a600f84b839c173167'),
];

export function findDataset(name: string): DatasetEntry | undefined {
  return datasetCatalog.find((d) => d.name === name);
}
