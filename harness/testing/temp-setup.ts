import { afterAll } from 'vitest';
import { removeFileTemps } from './temp.js';

// A vitest setupFile (vitest.config.ts): runs in every test file before it, so this afterAll, registered first,
// runs last, after the file's own afterAll hooks are done with their folders.
afterAll(removeFileTemps);
