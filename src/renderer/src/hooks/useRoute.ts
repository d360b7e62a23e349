/** Hash routes (#/history/abc): works when the page is served from any folder or port. */
import { useEffect, useState } from 'react';

export interface Route {
  page: string;
  param: string | null;
  params: URLSearchParams;
}

function parse(hash: string): Route {
  const [path = '', search = ''] = hash.replace(/^#\/?/, '').split('?');
  const [page = '', param = null] = path.split('/');
  return { page: page || 'scan', param: param ? decodeURIComponent(param) : null, params: new URLSearchParams(search) };
}

export function navigate(to: string): void {
  window.location.hash = to.startsWith('#') ? to : `#${to}`;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parse(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
