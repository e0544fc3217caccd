# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""The dashboard in a real browser: headless Chromium through Selenium.

Against a real Keystone, dbaas-scheduler-all with Keystone auth and
Horizon with the plugin (see environment.py).  Screenshots go to
``DBAAS_SCHEDULER_DASHBOARD_SCREENSHOTS`` (tox -e dashboard sets
doc/source/_static/dashboard/).
"""

from concurrent import futures
import os
import shutil
import time

from keystoneauth1.identity import v3
from keystoneauth1 import session as ks_session
from selenium.common import exceptions as selenium_exceptions
from selenium import webdriver
from selenium.webdriver.chrome import service as chrome_service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support import ui
import testtools

from dbaas_scheduler_dashboard.tests.browser import environment
from dbaasschedulerclient.v1 import client as scheduler_client

WAIT = 30
CHROMIUM = os.environ.get('DBAAS_DASHBOARD_CHROMIUM', '/usr/bin/chromium')
CHROMEDRIVER = os.environ.get('DBAAS_DASHBOARD_CHROMEDRIVER',
                              '/usr/bin/chromedriver')


def require_browser(test):
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        message = ('Chromium and its driver are not installed (apt-get '
                   'install chromium chromium-driver)')
        if os.environ.get('DBAAS_SCHEDULER_TEST_REQUIRE_BACKENDS') == '1':
            test.fail(message)
        test.skipTest(message)


class BrowserTest(testtools.TestCase):

    def setUp(self):
        super().setUp()
        require_browser(self)
        # Chromium starts while the environment does (the first test).
        with futures.ThreadPoolExecutor(1) as pool:
            browser = pool.submit(self._start_browser)
            try:
                self.env = environment.get()
            finally:
                self.browser = browser.result()
                self.addCleanup(self.browser.quit)
        self.addOnException(self._keep_horizon_log)
        self.wait = ui.WebDriverWait(
            self.browser, WAIT, ignored_exceptions=[
                selenium_exceptions.StaleElementReferenceException])

    @staticmethod
    def _start_browser():
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in ('--headless=new', '--no-sandbox',
                         '--disable-dev-shm-usage', '--disable-gpu',
                         '--window-size=1400,1000', '--lang=en-US'):
            options.add_argument(argument)
        return webdriver.Chrome(
            service=chrome_service.Service(CHROMEDRIVER), options=options)

    def _keep_horizon_log(self, exc_info):
        self.addDetail('horizon.log', testtools.content.text_content(
            self.env.horizon_tail()))
        try:
            self.addDetail('page', testtools.content.text_content(
                self.browser.page_source[-20000:]))
        except Exception:  # noqa: S110 - the browser may be gone
            pass

    # Helpers ----------------------------------------------------------

    def open(self, path):
        self.browser.get(self.env.horizon_url + path)

    def login(self, user):
        self.open('/auth/login/')
        self.browser.delete_all_cookies()
        self.open('/auth/login/')
        self.wait.until(ec.presence_of_element_located((By.ID,
                                                        'id_username')))
        for field, value in (('id_username', user.name),
                             ('id_password', user.password)):
            element = self.browser.find_element(By.ID, field)
            element.clear()
            element.send_keys(value)
        self.browser.find_element(By.ID, 'loginBtn').click()
        self.wait.until(lambda b: '/auth/login' not in b.current_url)
        # The user menu names who is logged in.
        self.wait.until(lambda b: user.name in self.text_of(
            '.navbar-right, #user_info, .user-menu, header'))

    def find(self, css):
        return self.wait.until(ec.visibility_of_element_located(
            (By.CSS_SELECTOR, css)))

    def text_of(self, css):
        return self.browser.find_element(By.CSS_SELECTOR, css).text

    def screenshot(self, name):
        target = os.environ.get('DBAAS_SCHEDULER_DASHBOARD_SCREENSHOTS')
        if not target:
            return
        os.makedirs(target, exist_ok=True)
        path = os.path.join(target, name + '.png')
        partial = os.path.join(target, '.%s.png' % name)
        self.browser.save_screenshot(partial)
        shutil.move(partial, path)

    def row(self, name):
        for _ in range(10):
            try:
                for row in self.browser.find_elements(
                        By.CSS_SELECTOR, '#policies tbody tr'):
                    if name in row.text:
                        return row
                return None
            except selenium_exceptions.StaleElementReferenceException:
                time.sleep(0.3)  # the page is being replaced
        return None

    def row_text(self, name):
        try:
            row = self.row(name)
            return row.text if row is not None else ''
        except selenium_exceptions.StaleElementReferenceException:
            return ''  # being replaced by its update

    def wait_for_row_text(self, name, text, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.open('/project/backup_policies/')
            row = self.row(name)
            if row is not None and text in row.text:
                return row
            time.sleep(1)
        self.fail('the row of %s never showed %r' % (name, text))

    def batch(self, name, action):
        """Select the policy's row and press a table action."""
        self.open('/project/backup_policies/')
        row = self.row(name)
        self.assertIsNotNone(row, 'no row for %s' % name)
        # Horizon's themed checkboxes hide the input under a label.
        self.browser.execute_script('arguments[0].click();', row.find_element(
            By.CSS_SELECTOR, 'input[type=checkbox]'))
        button = self.find('#policies__action_%s' % action)
        self.wait.until(lambda b: button.is_enabled())
        button.click()
        self.confirm_if_asked()

    def confirm_if_asked(self):
        try:
            button = ui.WebDriverWait(self.browser, 3).until(
                ec.element_to_be_clickable(
                    (By.CSS_SELECTOR, '.modal-footer .btn-primary, '
                     '.modal-footer .btn-danger')))
        except selenium_exceptions.TimeoutException:
            return
        button.click()

    def preview_rows(self):
        # At once, in the page: the script replaces the rows as it likes.
        return self.browser.execute_script(
            'return Array.from(document.querySelectorAll('
            '".dbaas-preview-runs tbody tr")).map(r => r.innerText);')

    def type_into(self, field_id, text):
        field = self.find('#' + field_id)
        field.clear()
        field.send_keys(text)
        return field

    def api(self, user):
        session = ks_session.Session(auth=v3.Password(
            auth_url=self.env.keystone.auth_url, username=user.name,
            password=user.password, user_domain_id='default',
            project_id=user.project_id))
        return scheduler_client.Client(
            session, endpoint='http://127.0.0.1:%d' % self.env.service.port)

    # The stories ------------------------------------------------------

    def test_a_member_manages_a_policy_from_the_browser(self):
        alice = self.env.keystone.users['alice']
        name = 'nightly-notes'
        self.login(alice)
        self.open('/project/backup_policies/')
        self.find('#policies')
        self.find('#policies__action_create').click()

        # The workflow, in its modal: details.
        self.type_into('id_name', name)
        self.type_into('id_instance_id', 'notes')
        ui.Select(self.find('#id_backend')).select_by_value('local')
        self.find('a[href="#create_backup_policy__scheduleaction"]'
                  ).click()

        # The preview follows the schedule as it is typed.
        self.type_into('id_timezone', 'Europe/Paris')
        self.type_into('id_schedule', '30 2 * * *')
        self.wait.until(lambda b: len(self.preview_rows()) == 5)
        first = self.preview_rows()
        self.assertIn('02:30', first[0])
        self.screenshot('create-preview')
        self.type_into('id_schedule', '0 4 * * 1')
        self.wait.until(lambda b: self.preview_rows()
                        and self.preview_rows() != first
                        and '04:00' in self.preview_rows()[0])
        # An invalid cron expression: an error in the field, no preview.
        schedule = self.type_into('id_schedule', '61 * * * *')
        error = self.find('.dbaas-preview-error')
        self.assertTrue(error.text)
        self.assertEqual([], self.preview_rows())
        self.assertIn('has-error', schedule.find_element(
            By.XPATH, './ancestor::div[contains(@class, "form-group")]'
        ).get_attribute('class'))
        # Submitted anyway, the server refuses it in the same field.
        self.find('.modal-footer input[type=submit], '
                  '.modal-footer button[type=submit]').click()
        self.wait.until(lambda b: b.find_elements(
            By.CSS_SELECTOR, '.form-group.has-error #id_schedule'))
        self.find('a[href="#create_backup_policy__scheduleaction"]'
                  ).click()
        self.type_into('id_schedule', '30 2 * * *')
        self.find('a[href="#create_backup_policy__retentionaction"]'
                  ).click()
        self.type_into('id_keep_daily', '7')
        self.find('.modal-footer input[type=submit], '
                  '.modal-footer button[type=submit]').click()
        self.wait.until(lambda b: self.row(name) is not None)
        self.assertIn('Every day at 02:30 (Europe/Paris)',
                      self.row(name).text)
        self.screenshot('policies-table')

        # Back up now: the execution reaches SUCCEEDED in the table...
        self.batch(name, 'run')
        # The row refreshes itself while the backup runs (Horizon's ajax
        # row update): the page is not loaded again.
        self.browser.execute_script('window.dbaasNotReloaded = true;')
        self.wait.until(lambda b: 'Succeeded' in self.row_text(name))
        self.assertTrue(self.browser.execute_script(
            'return window.dbaasNotReloaded === true;'))
        self.assertNotIn('warning', self.row(name).get_attribute('class'))
        # And without JavaScript, loading the page again shows it too.
        self.wait_for_row_text(name, 'Succeeded')
        self.screenshot('policies-table-succeeded')
        # ... and on the policy's page, in its list and on the timeline.
        self.row(name).find_element(By.LINK_TEXT, name).click()
        mark = self.find('svg .dbaas-status-succeeded')
        self.assertIn('succeeded', mark.get_attribute('data-status'))
        self.assertIn('Succeeded', self.text_of('#executions'))
        self.assertIn('keeps', self.text_of('.dbaas-policy-detail').lower())
        self.screenshot('policy-timeline')

        # Pause, resume, delete.
        self.batch(name, 'pause')
        self.wait_for_row_text(name, 'Paused')
        self.batch(name, 'resume')
        self.wait_for_row_text(name, 'Active')
        self.batch(name, 'delete')
        deadline = time.monotonic() + WAIT
        while self.row(name) is not None and time.monotonic() < deadline:
            self.open('/project/backup_policies/')
        self.assertIsNone(self.row(name))

    def test_an_admin_sees_the_services(self):
        self.login(self.env.keystone.admin)
        self.open('/admin/backup_scheduler/')
        services = self.find('#services')
        self.assertIn('dbaas-scheduler', services.text)
        self.assertIn('Up', services.text)
        self.find('#dbaas-fleet-health')
        self.find('#all_policies')
        self.screenshot('admin-overview')

    def test_another_project_sees_none_of_the_first_ones_policies(self):
        alice = self.env.keystone.users['alice']
        bob = self.env.keystone.users['bob']
        policy = self.api(alice).create_policy({
            'name': 'alices-secret', 'instance_id': 'notes',
            'backend': 'local', 'schedule': '0 3 * * *'})
        self.addCleanup(self.api(alice).delete_policy, policy['id'])
        self.login(bob)
        self.open('/project/backup_policies/')
        table = self.find('#policies')
        self.assertNotIn('alices-secret', table.text)
        # Nor by its address.
        self.open('/project/backup_policies/%s/' % policy['id'])
        self.assertNotIn('alices-secret', self.browser.page_source)
        # Alice does see it.
        self.login(alice)
        self.open('/project/backup_policies/')
        self.assertIn('alices-secret', self.find('#policies').text)
