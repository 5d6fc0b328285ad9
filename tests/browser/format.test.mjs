// www/format.js: the one number formatter of the playground, compare mode, KSD panel and embed.
import test from 'node:test';
import assert from 'node:assert/strict';
import { formatNumber } from '../../www/format.js';

test('significant digits, exponent form outside [1e-3, big), missing values', () => {
  assert.equal(formatNumber(3.14159), '3.14');
  assert.equal(formatNumber(3.14159, { digits: 4 }), '3.142');
  assert.equal(formatNumber(0), '0');
  assert.equal(formatNumber(12345.6), '12300');
  assert.equal(formatNumber(123456), '1.23e+5');
  assert.equal(formatNumber(0.000123), '1.23e-4');
  assert.equal(formatNumber(-0.5), '-0.5');
  assert.equal(formatNumber(Infinity), 'Infinity');
  assert.equal(formatNumber(NaN), 'NaN');
  assert.equal(formatNumber(null, { missing: 'n/a' }), 'n/a');
  assert.equal(formatNumber(undefined, { missing: '–' }), '–');
  // the KSD panel's rule: 4 digits, exponent from 1e4 with 3 decimals
  assert.equal(formatNumber(12345, { digits: 4, big: 1e4, expDigits: 3 }), '1.235e+4');
  assert.equal(formatNumber(0.25, { digits: 4, big: 1e4, expDigits: 3 }), '0.25');
});
