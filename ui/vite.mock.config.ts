import { defineConfig } from 'vite';

// Bundles browser/mock-backend.ts into one classic script Playwright can inject into a page.
export default defineConfig({
  build: {
    outDir: 'dist-mock',
    emptyOutDir: true,
    lib: { entry: 'browser/mock-backend.ts', formats: ['iife'], name: 'AirlockMock', fileName: () => 'mock-backend.js' },
  },
});
