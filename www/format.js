// Number formatting shared by the playground, compare mode, the KSD panel and the embed element.

/**
 * `v` with `digits` significant digits, in exponent form below 1e-3 or from `big` on
 * (`expDigits` after the point); `missing` for null, undefined and NaN; ±Infinity as such.
 */
export function formatNumber(v, { digits = 3, missing = 'NaN', big = 1e5, expDigits = digits - 1 } = {}) {
  if (v === null || v === undefined || Number.isNaN(v)) return missing;
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= big || a < 1e-3)) return v.toExponential(expDigits);
  return String(Number(v.toPrecision(digits)));
}
