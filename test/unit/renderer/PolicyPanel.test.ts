// @vitest-environment happy-dom
import '@testing-library/jest-dom/vitest';
import { createElement } from 'react';
import { act, cleanup, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import { nextSliderValue } from '../../../renderer/src/components/KnobControl.js';
import { PolicyPanel } from '../../../renderer/src/components/PolicyPanel.js';
import { demoPolicy } from '../../../renderer/src/dev/demoSnapshot.js';
import { renderPanel } from './fakeApi.js';

afterEach(cleanup);

describe('PolicyPanel', () => {
  it('offers the five policies as a radio group, each with its line, the current one checked', () => {
    renderPanel(createElement(PolicyPanel));
    const group = screen.getByRole('radiogroup', { name: 'Scheduling policy' });
    const radios = screen.getAllByRole('radio');
    expect(group).toBeInTheDocument();
    expect(radios.map((radio) => (radio as HTMLInputElement).value)).toEqual(['FIFO', 'SRTF', 'PACK', 'FAIR', 'PRIORITY']);
    expect(screen.getByRole('radio', { name: /PACK/ })).toBeChecked();
    expect(screen.getByRole('radio', { name: /SRTF/ })).toHaveAccessibleName(/least time left/);
  });

  it('switches policy through the API and shows the new policy’s knobs', async () => {
    const user = userEvent.setup();
    const { api } = renderPanel(createElement(PolicyPanel));
    api.setPolicy.mockResolvedValueOnce(demoPolicy('FAIR'));
    await user.click(screen.getByRole('radio', { name: /FAIR/ }));
    expect(api.setPolicy).toHaveBeenCalledWith('FAIR');
    expect(await screen.findByRole('slider', { name: 'Quantum ms' })).toHaveValue('200');
    expect(screen.getByRole('radio', { name: /FAIR/ })).toBeChecked();
  });

  it('checks the picked policy at once, and goes back to the current one if the service refuses', async () => {
    const user = userEvent.setup();
    const { api } = renderPanel(createElement(PolicyPanel));
    let refuse: (error: Error) => void = () => undefined;
    api.setPolicy.mockReturnValueOnce(new Promise((_resolve, reject) => { refuse = reject; }));
    await user.click(screen.getByRole('radio', { name: /SRTF/ }));
    expect(screen.getByRole('radio', { name: /SRTF/ })).toBeChecked();
    await act(async () => refuse(new Error('no')));
    expect(screen.getByRole('radio', { name: /PACK/ })).toBeChecked();
  });

  it('renders each number knob as a described slider with its value and unit', () => {
    renderPanel(createElement(PolicyPanel));
    const slider = screen.getByRole('slider', { name: 'Lane growth percent' });
    expect(slider).toHaveAttribute('min', '0');
    expect(slider).toHaveAttribute('max', '200');
    expect(slider).toHaveAttribute('step', '5');
    expect(slider).toHaveAttribute('aria-valuetext', '25 %');
    expect(slider).toHaveAccessibleDescription('How much a lane may grow to take in a job before a new lane opens.');
    expect(screen.getByRole('slider', { name: 'Max lanes' })).toHaveAttribute('aria-valuetext', '2 lanes');
  });

  it('calls setPolicyParams for each key press on a slider, clamped to its range', async () => {
    const user = userEvent.setup();
    const { api } = renderPanel(createElement(PolicyPanel));
    const slider = screen.getByRole('slider', { name: 'Max lanes' });
    slider.focus();
    await user.keyboard('{ArrowRight}');
    expect(api.setPolicyParams).toHaveBeenLastCalledWith({ maxLanes: 3 });
    await user.keyboard('{ArrowUp}');
    expect(api.setPolicyParams).toHaveBeenLastCalledWith({ maxLanes: 4 });
    await user.keyboard('{End}');
    expect(api.setPolicyParams).toHaveBeenLastCalledWith({ maxLanes: 8 });
    expect(slider).toHaveAttribute('aria-valuetext', '8 lanes');
    const calls = api.setPolicyParams.mock.calls.length;
    await user.keyboard('{ArrowRight}'); // already at the top: nothing to send
    expect(api.setPolicyParams).toHaveBeenCalledTimes(calls);
    await user.keyboard('{Home}');
    expect(api.setPolicyParams).toHaveBeenLastCalledWith({ maxLanes: 1 });
  });

  it('moves by a tenth of the range on Page Up and by ten steps with Shift', async () => {
    const user = userEvent.setup();
    const { api } = renderPanel(createElement(PolicyPanel));
    const slider = screen.getByRole('slider', { name: 'Lane growth percent' });
    slider.focus();
    await user.keyboard('{PageUp}');
    expect(api.setPolicyParams).toHaveBeenLastCalledWith({ laneGrowthPercent: 45 });
    await user.keyboard('{Shift>}{ArrowLeft}{/Shift}');
    expect(api.setPolicyParams).toHaveBeenLastCalledWith({ laneGrowthPercent: 0 });
  });

  it('toggles a boolean knob as a switch', async () => {
    const user = userEvent.setup();
    const { api } = renderPanel(createElement(PolicyPanel));
    const toggle = screen.getByRole('switch', { name: 'Prefer full lanes' });
    expect(toggle).toBeChecked();
    await user.click(toggle);
    expect(api.setPolicyParams).toHaveBeenCalledWith({ preferFullLanes: false });
    expect(toggle).not.toBeChecked();
    await user.keyboard('{Enter}');
    expect(api.setPolicyParams).toHaveBeenLastCalledWith({ preferFullLanes: true });
  });

  it('follows policy changes pushed by the service', () => {
    const { store } = renderPanel(createElement(PolicyPanel));
    act(() => store.getState().applyEvent({ type: 'policy', policy: { ...demoPolicy('PACK'), params: { maxLanes: 5, laneGrowthPercent: 25, preferFullLanes: true } } }));
    expect(screen.getByRole('slider', { name: 'Max lanes' })).toHaveValue('5');
  });
});

describe('nextSliderValue', () => {
  it('stays on the step grid and inside the range', () => {
    expect(nextSliderValue('ArrowRight', false, 0.5, 0, 10, 0.5)).toBe(1);
    expect(nextSliderValue('ArrowLeft', false, 0.2, 0, 10, 0.5)).toBe(0);
    expect(nextSliderValue('PageDown', false, 3, 0, 10, 0.5)).toBe(2);
    expect(nextSliderValue('ArrowUp', true, 9, 0, 10, 0.5)).toBe(10);
    expect(nextSliderValue('a', false, 1, 0, 10, 1)).toBeNull();
  });
});
