// Lint for the bridge's TypeScript: eslint's and typescript-eslint's recommended rules.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['lib/**', 'lib-test/**', 'node_modules/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      eqeqeq: 'error',
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[property.name='innerHTML']", message: 'Never render untrusted text as HTML.' }
      ]
    }
  },
  // The live view's ES module (byre_jupyter/ui/live.js, run from the repository's root:
  // npm run lint) and its tests: plain JavaScript for the browser.
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        ['document', 'window', 'navigator', 'setTimeout', 'Event', 'MutationObserver', 'ResizeObserver',
          'requestAnimationFrame', 'cancelAnimationFrame', 'globalThis'].map((name) => [name, 'readonly'])
      )
    }
  }
);
