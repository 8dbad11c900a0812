export * from './config';
export * from './host';
export * from './server';
