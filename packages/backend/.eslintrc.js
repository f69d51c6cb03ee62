module.exports = require('@backstage/cli/config/eslint-factory')(__dirname, {
  testRules: {
    // A test without an assertion passes whatever the code does: an error, not a warning.
    'jest/expect-expect': ['error', { assertFunctionNames: ['expect'] }],
  },
});
