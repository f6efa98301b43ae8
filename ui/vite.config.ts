/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// The desktop app loads ui/dist through Tauri's asset protocol; no dev server is needed to run it.
export default defineConfig({
  plugins: [svelte()],
  clearScreen: false,
  // Two pages: the desktop app (index.html) and the phone inbox (phone.html, served by the phone
  // server in crates/remote with public/'s manifest and service worker).
  build: {
    target: 'es2022',
    outDir: 'dist',
    emptyOutDir: true,
    rollupOptions: { input: { main: 'index.html', phone: 'phone.html' } },
  },
  resolve: process.env.VITEST ? { conditions: ['browser'] } : undefined,
  test: {
    environment: 'jsdom',
    globals: true,
    include: ['src/**/*.test.ts'],
    setupFiles: ['src/test-setup.ts'],
    // scripts/test.sh runs these beside cargo's build on 2 cores: a test that takes under a second
    // alone took over 5 s (Vitest's default limit) there. A deadline for a stuck test, not a wait.
    testTimeout: 30_000,
  },
});
