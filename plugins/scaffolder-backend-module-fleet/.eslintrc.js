module.exports = require('@backstage/cli/config/eslint-factory')(__dirname, {
  testRules: {
    // A test without an assertion passes whatever the code does: an error, not a warning.
    // supertest's `request(server)...expect(status)` is an assertion too.
    'jest/expect-expect': [
      'error',
      { assertFunctionNames: ['expect', 'request.**.expect'] },
    ],
  },
});
