import { fromHash, guessDeviceName } from './remote';

describe('the phone page', () => {
  it('names the device after its model where the browser says it', () => {
    expect(guessDeviceName('Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 Chrome/120 Mobile Safari/537.36')).toBe('Pixel 7');
    expect(guessDeviceName('Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 Chrome/130 Mobile')).toBe('Android phone');
    expect(guessDeviceName('Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15')).toBe('iPhone');
    expect(guessDeviceName('curl/8')).toBe('Phone');
  });

  it('reads the pairing code and the item to open from the address', () => {
    expect(fromHash('#pair=ABCDE23456')).toEqual({ pair: 'ABCDE23456', item: null });
    expect(fromHash('#item=apr_1')).toEqual({ pair: null, item: 'apr_1' });
    expect(fromHash('')).toEqual({ pair: null, item: null });
  });
});
