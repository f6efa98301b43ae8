/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// The desktop app loads ui/dist through Tauri's asset protocol; no dev server is needed to run it.
export default defineConfig({
  plugins: [svelte()],
  clearScreen: false,
  build: { target: 'es2022', outDir: 'dist', emptyOutDir: true },
  resolve: process.env.VITEST ? { conditions: ['browser'] } : undefined,
  test: {
    environment: 'jsdom',
    globals: true,
    include: ['src/**/*.test.ts'],
    setupFiles: ['src/test-setup.ts'],
  },
});
