import { mount } from 'svelte';
import Phone from './Phone.svelte';
import { registerServiceWorker } from './notify';
import '../app.css';

const target = document.getElementById('app');
if (!target) throw new Error('no #app element');
registerServiceWorker();
export default mount(Phone, { target });
